#include "dsec/layer/build.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>

#include "dsec/sys/proc.h"

namespace dsec::layer {

// All images share one UUID and timestamp so the same tree gives the same bytes.
constexpr const char* kFixedUuid = "00000000-0000-0000-0000-000000000000";

Status check_compression(const std::string& compression) {
    if (compression == "none" || compression == "lz4" || compression == "lz4hc") return {};
    return fail(make_error("usage", "unknown compression \"" + compression + "\" (none, lz4, lz4hc)"));
}

Status make_image(const std::string& tree, const std::string& image_file, const std::string& compression) {
    if (auto r = check_compression(compression); !r) return r;
    std::vector<std::string> argv = {"mkfs.erofs", "--quiet", "-T0", std::string("-U") + kFixedUuid};
    if (compression != "none") argv.push_back("-z" + compression);
    argv.push_back(image_file);
    argv.push_back(tree);
    auto r = proc::run_checked(argv);
    if (!r) {
        // mkfs.erofs reports a full disk only in its message; give it the stable code.
        if (r.error().message.find("No space left") != std::string::npos) {
            r.error().code = "no_space";
            r.error().err = ENOSPC;
        }
        return fail(std::move(r.error()).context("making EROFS image of " + tree));
    }
    return {};
}

namespace {
thread_local uint64_t walk_count;
int count_one(const char*, const struct stat*, int, struct FTW*) {
    walk_count++;
    return 0;
}
}  // namespace

Result<uint64_t> count_entries(const std::string& tree) {
    walk_count = 0;
    if (::nftw(tree.c_str(), count_one, 64, FTW_PHYS) < 0) return fail(sys_error("walk", tree));
    return walk_count - 1;  // the root itself is not an entry
}

Result<Layer> build_tree(const Store& store, const std::string& tree, const BuildOptions& opts) {
    if (!opts.name.empty())
        if (auto r = check_name(opts.name); !r) return fail(r.error());
    struct stat st;
    if (::stat(tree.c_str(), &st) < 0) return fail(sys_error("stat", tree));
    if (!S_ISDIR(st.st_mode)) return fail(errno_error(ENOTDIR, "build", tree));

    auto stage = store.staging("build-");
    if (!stage) return fail(stage.error());
    return image_and_publish(store, tree, stage->path() + "/image.erofs", opts);
}

Result<Layer> image_and_publish(const Store& store, const std::string& tree, const std::string& image,
                                const BuildOptions& opts) {
    if (auto r = make_image(tree, image, opts.compression); !r) return fail(r.error());
    auto files = count_entries(tree);
    if (!files) return fail(files.error());

    Layer layer;
    layer.name = opts.name;
    layer.labels = opts.labels;
    layer.compression = opts.compression;
    layer.source = opts.source;
    layer.parents = opts.parents;
    layer.config = opts.config;
    layer.files = *files;
    return store.publish(image, std::move(layer));
}

}  // namespace dsec::layer
