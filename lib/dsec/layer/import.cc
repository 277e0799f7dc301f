#include "dsec/layer/import.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "dsec/layer/oci.h"

namespace dsec::layer {

using nlohmann::json;

json Imported::record(const Store& store) const {
    json r = layer.to_record(store.image_path(layer.digest));
    stats.annotate(r);
    return r;
}

namespace {
// A staging directory with an empty tree (mode 0755, like any root) inside it.
struct Stage {
    Staging staging;
    std::string tree;
};

Result<Stage> make_stage(const Store& store, const std::string& prefix) {
    auto s = store.staging(prefix);
    if (!s) return fail(s.error());
    std::string tree = s->path() + "/tree";
    if (::mkdir(tree.c_str(), 0755) < 0) return fail(sys_error("mkdir", tree));
    return Stage{std::move(*s), tree};
}

// Builds the staged tree into an image and publishes it.
Result<Layer> finish(const Store& store, const Stage& stage, const BuildOptions& opts) {
    return image_and_publish(store, stage.tree, stage.staging.path() + "/image.erofs", opts);
}

Status check_options(const BuildOptions& b) {
    if (!b.name.empty())
        if (auto r = check_name(b.name); !r) return r;
    return check_compression(b.compression);
}

// Extracts one image layer blob into `tree`, checking its digest when it has one.
Status extract_blob(int dirfd, const std::string& where, const ImageBlob& blob, size_t index, SafeTree& tree,
                    const ExtractOptions& opts, ExtractStats& stats, const std::function<void(uint64_t)>& progress) {
    auto fd = open_beneath(dirfd, blob.path, where);
    if (!fd) return fail(fd.error());
    Sha256 hash;
    Input in{fd->get(), where + "#" + std::to_string(index) + " (" + blob.path + ")",
             blob.sha256.empty() ? nullptr : &hash, progress};
    if (auto r = extract(in, tree, opts, stats); !r) return r;
    if (!blob.sha256.empty()) {
        // Read to the end: libarchive may stop at the tar end marker before the blob ends.
        char buf[65536];
        ssize_t n;
        while ((n = ::read(fd->get(), buf, sizeof buf)) > 0) hash.update(buf, size_t(n));
        if (hash.hex() != blob.sha256)
            return fail(make_error(Code::bad_input, "layer blob does not match its digest sha256:" + blob.sha256, in.name));
    }
    return {};
}
}  // namespace

Result<Imported> import_tar(const Store& store, Input& in, const TarImport& opts) {
    if (auto r = check_options(opts.build); !r) return fail(r.error());
    auto stage = make_stage(store, "import-");
    if (!stage) return fail(stage.error());
    auto tree = SafeTree::open(stage->tree);
    if (!tree) return fail(tree.error());
    Imported out;
    ExtractOptions x{opts.oci, false, opts.limits};
    if (auto r = extract(in, *tree, x, out.stats); !r) return fail(r.error());
    if (opts.phase) opts.phase("building and hashing the image");
    auto layer = finish(store, *stage, opts.build);
    if (!layer) return fail(layer.error());
    out.layer = std::move(*layer);
    return out;
}

Status import_image(const Store& store, const std::string& path, const ImageImport& opts,
                    const std::function<Status(const Imported&)>& published) {
    if (auto r = check_options(opts.build); !r) return r;
    struct stat st;
    if (::stat(path.c_str(), &st) < 0) return fail(sys_error("stat", path));

    // An archive is unpacked (with the same hostile-input checks) into staging first:
    // its manifest may come last, after the layers it lists.
    std::optional<Stage> unpacked;
    Fd dirfd;
    if (S_ISDIR(st.st_mode)) {
        dirfd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!dirfd) return fail(sys_error("open", path));
    } else {
        auto s = make_stage(store, "image-");
        if (!s) return fail(s.error());
        unpacked.emplace(std::move(*s));
        auto tree = SafeTree::open(unpacked->tree);
        if (!tree) return fail(tree.error());
        Fd archive(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!archive) return fail(sys_error("open", path));
        Input in{archive.get(), path, nullptr, [&](uint64_t n) {
                     if (opts.progress) opts.progress(n, uint64_t(st.st_size) * 2);
                 }};
        ExtractStats outer;
        if (auto r = extract(in, *tree, ExtractOptions{false, false, opts.limits}, outer); !r) return r;
        dirfd.reset(::open(unpacked->tree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!dirfd) return fail(sys_error("open", unpacked->tree));
    }
    auto manifest = read_image_manifest(dirfd.get(), path, opts.platform);
    if (!manifest) return fail(manifest.error());
    if (manifest->layers.empty()) return fail(make_error(Code::bad_input, "image has no layers", path));

    // Progress counts the blobs' bytes (after the archive itself, if there was one).
    uint64_t total = 0, done = 0;
    for (auto& b : manifest->layers) {
        auto fd = open_beneath(dirfd.get(), b.path, path);
        if (!fd) return fail(fd.error());
        struct stat bs;
        if (::fstat(fd->get(), &bs) == 0) total += uint64_t(bs.st_size);
    }
    uint64_t base = unpacked ? total : 0;
    auto progress = [&](uint64_t n) {
        if (opts.progress) opts.progress(base + done + n, base + total);
    };

    std::string source = manifest->kind + ":" + path;
    ExtractStats stats;  // caps hold for the whole image
    if (opts.squash) {
        auto stage = make_stage(store, "import-");
        if (!stage) return fail(stage.error());
        auto tree = SafeTree::open(stage->tree);
        if (!tree) return fail(tree.error());
        for (size_t i = 0; i < manifest->layers.size(); i++) {
            if (auto r = extract_blob(dirfd.get(), path, manifest->layers[i], i, *tree, {true, true, opts.limits}, stats,
                                      progress);
                !r)
                return r;
            done = stats.input_bytes;
        }
        BuildOptions b = opts.build;
        b.source = source;
        b.config = manifest->config;
        auto layer = finish(store, *stage, b);
        if (!layer) return fail(layer.error());
        return published(Imported{std::move(*layer), stats});
    }

    // Every layer is extracted and built before the first is published, so a bad blob
    // high in the image leaves nothing of it in the store.
    struct Built {
        Stage stage;
        std::string image;
        uint64_t files;
        ExtractStats stats;
    };
    std::vector<Built> built;
    for (size_t i = 0; i < manifest->layers.size(); i++) {
        auto stage = make_stage(store, "import-");
        if (!stage) return fail(stage.error());
        auto tree = SafeTree::open(stage->tree);
        if (!tree) return fail(tree.error());
        ExtractStats one;
        one.entries = stats.entries, one.bytes = stats.bytes, one.input_bytes = stats.input_bytes;
        if (auto r = extract_blob(dirfd.get(), path, manifest->layers[i], i, *tree, {true, false, opts.limits}, one,
                                  progress);
            !r)
            return r;
        stats.entries = one.entries, stats.bytes = one.bytes, stats.input_bytes = done = one.input_bytes;
        std::string image = stage->staging.path() + "/image.erofs";
        if (auto r = make_image(stage->tree, image, opts.build.compression); !r) return fail(r.error());
        auto files = count_entries(stage->tree);
        if (!files) return fail(files.error());
        // The tree has served its purpose: free its space before the next layer's.
        if (auto r = fs::remove_tree(stage->tree); !r) return fail(r.error());
        built.push_back({std::move(*stage), image, *files, std::move(one)});
    }

    auto name_of = [&](size_t i) {
        bool top = i + 1 == built.size();
        return opts.build.name.empty() || top ? opts.build.name : opts.build.name + "." + std::to_string(i + 1);
    };
    for (size_t i = 0; i < built.size(); i++)
        if (!name_of(i).empty())
            if (auto r = check_name(name_of(i)); !r) return r;
    std::vector<std::string> parents;
    for (size_t i = 0; i < built.size(); i++) {
        bool top = i + 1 == built.size();
        Layer layer;
        layer.name = name_of(i);
        layer.labels = opts.build.labels;
        layer.compression = opts.build.compression;
        layer.source = source + "#" + std::to_string(i);
        layer.parents = parents;
        if (top) layer.config = manifest->config;
        layer.files = built[i].files;
        auto published_layer = store.publish(built[i].image, std::move(layer));
        if (!published_layer) return fail(published_layer.error());
        parents.push_back(published_layer->digest);
        if (auto r = published(Imported{std::move(*published_layer), std::move(built[i].stats)}); !r) return r;
    }
    return {};
}

}  // namespace dsec::layer
