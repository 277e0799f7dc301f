#include "dsec/layer/verify.h"

#include "dsec/sys/proc.h"
#include "dsec/sys/sha256.h"

namespace dsec::layer {

Status verify_digest(const Store& store, const Layer& layer) {
    std::string image = store.image_path(layer.digest);
    auto hex = sha256_file(image);
    if (!hex) return fail(hex.error());
    if (*hex != layer.hex())
        return fail(make_error(Code::corrupt, "digest mismatch: image hashes to sha256:" + *hex, image));
    return {};
}

Status verify(const Store& store, const Layer& layer) {
    if (auto r = verify_digest(store, layer); !r) return r;
    std::string image = store.image_path(layer.digest);
    auto checked = proc::run({"fsck.erofs", "--extract", image});
    if (!checked) return fail(checked.error());
    if (checked->status != 0) {
        std::string tail = checked->stderr_tail;
        while (!tail.empty() && tail.back() == '\n') tail.pop_back();
        return fail(make_error(Code::corrupt, "image does not read: " + tail.substr(tail.find_last_of('\n') + 1), image));
    }
    return {};
}

}  // namespace dsec::layer
