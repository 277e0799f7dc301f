// dsec-layer import-image: an OCI image layout or a docker save directory. The input is
// a small bundle of files, each introduced by a line "=== PATH" (the first line, before
// any, is the platform asked for); they are written into a scratch directory, and the
// image's manifest is read from it with every path checked.
#include <fcntl.h>
#include <sys/stat.h>

#include "dsec/layer/oci.h"
#include "dsec/layer/safe_tree.h"
#include "fuzz_util.h"

using namespace dsec;

namespace {
// Writes `body` at the clean relative `path` below `root`, making parents; names that
// do not clean (absolute, "..") are left out, as an archive would never hold them.
void put(const std::string& root, std::string_view path, std::string_view body) {
    auto clean = layer::clean_path(path);
    if (!clean || clean->empty()) return;
    std::string full = root + "/" + *clean;
    for (size_t i = root.size() + 1; i < full.size(); i++)
        if (full[i] == '/') {
            full[i] = '\0';
            ::mkdir(full.c_str(), 0755);
            full[i] = '/';
        }
    Fd fd(::open(full.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd.get() < 0) return;  // a directory already there, or a parent that is a file
    (void)fs::write_all(fd.get(), body, full);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto [platform, rest] = fuzz::first_line(data, size);
    fuzz::Scratch scratch;
    constexpr std::string_view kMark = "=== ";
    while (rest.substr(0, kMark.size()) == kMark) {
        auto nl = rest.find('\n');
        std::string_view path = rest.substr(kMark.size(), nl == std::string_view::npos ? rest.npos : nl - kMark.size());
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        auto next = rest.find("\n=== ");
        std::string_view body = rest.substr(0, next);
        rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
        put(scratch.path(), path, body);
    }
    Fd dir(::open(scratch.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) std::abort();
    if (auto m = layer::read_image_manifest(dir.get(), "image", platform)) {
        for (auto& l : m->layers) {
            // Every layer path the manifest gives must open beneath the image, or be refused.
            (void)layer::open_beneath(dir.get(), l.path, "image");
        }
    }
    return 0;
}
