#include "dsec/layer/publish.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "dsec/sys/fd.h"
#include "dsec/sys/paths.h"
#include "dsec/sys/sha256.h"

namespace dsec::layer {

namespace {

constexpr size_t kCopyChunk = size_t(1) << 20;

// Copies `src` to a new file `dst`, fsyncs it and returns the sha256 of what was copied.
Result<std::string> copy_hashed(const std::string& src, const std::string& dst) {
    Fd in(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in) return fail(sys_error("open", src));
    Fd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
    if (!out) return fail(sys_error("create", dst));
    Sha256 sha;
    std::vector<char> buf(kCopyChunk);
    for (;;) {
        if (interrupted()) return fail(interrupted_error());
        ssize_t n = ::read(in.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("read", src));
        if (n == 0) break;
        sha.update(buf.data(), size_t(n));
        if (auto r = fs::write_all(out.get(), {buf.data(), size_t(n)}, dst); !r) return fail(r.error());
    }
    if (::fsync(out.get()) < 0) return fail(sys_error("fsync", dst));
    return sha.hex();
}

}  // namespace

Result<Published> publish_to(const Store& from, const Layer& layer, const Store& to, const std::string& name) {
    if (!name.empty())
        if (auto r = check_name(name); !r) return fail(r.error());
    if (auto there = to.resolve(layer.digest); there && there->size == layer.size) {
        if (!name.empty())
            if (auto r = to.tag(name, layer.digest); !r) return fail(r.error());
        there->name = name.empty() ? there->name : name;
        return Published{*there, false};
    }
    auto staging = to.staging("publish-");
    if (!staging) return fail(staging.error());
    std::string staged = staging->path() + "/" + layer.hex() + ".erofs";
    auto hex = copy_hashed(from.image_path(layer.digest), staged);
    if (!hex) return fail(std::move(hex.error()).context("copying layer " + layer.digest + " to " + to.dir()));
    if (*hex != layer.hex())
        return fail(make_error(Code::corrupt, "image hashes to sha256:" + *hex + ", not its digest " + layer.digest,
                               from.image_path(layer.digest)));
    Layer wanted = layer;
    wanted.name = name;
    auto done = to.publish(staged, wanted);
    if (!done) return fail(done.error());
    return Published{*done, true};
}

}  // namespace dsec::layer
