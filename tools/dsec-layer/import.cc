// dsec-layer import and import-image: tar archives and OCI / docker images become layers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsec/json/jsonl.h"
#include "dsec/layer/import.h"
#include "dsec/sys/parse.h"
#include "commands.h"

namespace dsec::layer_tool {

namespace {
// Options import and import-image share.
struct Common {
    std::string name, compression = "lz4";
    std::vector<std::string> labels;
    uint64_t max_size = layer::ExtractLimits{}.max_bytes;
    uint64_t max_entries = layer::ExtractLimits{}.max_entries;
};

void add_common(CLI::App* cmd, Common& c, const char* name_help) {
    cmd->add_option("--name", c.name, name_help);
    cmd->add_option("--label", c.labels, "add a label key=value (repeatable)");
    cmd->add_option("--compress", c.compression, "none, lz4 or lz4hc")->capture_default_str();
    cmd->add_option("--max-size", c.max_size, "cap on the bytes extracted (suffixes K, M, G, T: powers of 1024)")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    cmd->add_option("--max-entries", c.max_entries, "cap on the number of archive entries")->capture_default_str();
}

Result<layer::BuildOptions> build_options(const Common& c) {
    auto labels = parse::parse_labels(c.labels);
    if (!labels) return fail(labels.error());
    layer::BuildOptions b;
    b.name = c.name;
    b.labels = *labels;
    b.compression = c.compression;
    return b;
}

layer::ExtractLimits limits(const Common& c) {
    layer::ExtractLimits l;
    l.max_bytes = c.max_size;
    l.max_entries = c.max_entries;
    return l;
}

void add_tar_import(CLI::App& app, Context& ctx) {
    struct Opts : Common {
        std::string file;
        bool oci = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("import", "import a tar archive (plain, gzip, xz, zstd, bzip2) as a layer");
    cmd->footer(cli::example("  dsec-layer import python.tar.gz --name python3.12\n  zcat rootfs.tar.gz | dsec-layer import - --name base --max-size 4G"));
    cmd->add_option("FILE", opts->file, "archive to import, or - for standard input")->required();
    add_common(cmd, *opts, "name the layer (unnamed layers are removed by gc)");
    cmd->add_flag("--oci-layer", opts->oci, "OCI layer: .wh.NAME files are whiteouts, .wh..wh..opq opaque dirs");
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto b = build_options(*opts);
            if (!b) return fail(b.error());
            b->source = "tar:" + opts->file;
            // Open the archive (or take stdin) and learn its size for the progress bar.
            Fd owned;
            int fd = STDIN_FILENO;
            if (opts->file != "-") {
                owned.reset(::open(opts->file.c_str(), O_RDONLY | O_CLOEXEC));
                if (!owned) return fail(sys_error("open", opts->file));
                fd = owned.get();
            }
            struct stat st;
            uint64_t total = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
            cli::Progress bar("importing", total);
            layer::Input in{fd, opts->file, nullptr, [&](uint64_t n) { bar.set(n); }};
            // Extract, build the image, publish.
            auto store = ctx.store();
            layer::TarImport how{*b, opts->oci, limits(*opts), [&](const std::string& what) { bar.phase(what); }};
            auto got = layer::import_tar(store, in, how);
            if (!got) return fail(std::move(got.error()).context("importing " + opts->file));
            if (auto r = jsonl::emit(got->record(store)); !r) return fail(r.error());
            return 0;
        };
    });
}

void add_image_import(CLI::App& app, Context& ctx) {
    struct Opts : Common {
        std::string path, platform;
        bool squash = false;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("import-image", "import an OCI image layout or a docker save archive, one layer per image layer");
    cmd->footer(cli::example("  skopeo copy docker://python:3.12 oci:py:3.12 && dsec-layer import-image py --name py\n  docker save python:3.12 > py.tar; dsec-layer import-image py.tar --name py --squash"));
    cmd->add_option("PATH", opts->path, "OCI layout directory, docker save archive, or either unpacked")->required();
    add_common(cmd, *opts, "name the top layer (lower ones get NAME.1, NAME.2, ... from the base up)");
    cmd->add_flag("--squash", opts->squash, "make a single layer of the whole image");
    cmd->add_option("--platform", opts->platform, "pick the manifest for os/arch[/variant] (default: the first)");
    cmd->callback([&ctx, opts] {
        ctx.action = [&ctx, opts]() -> Result<int> {
            auto b = build_options(*opts);
            if (!b) return fail(b.error());
            cli::Progress bar("importing", 1000);
            layer::ImageImport im{*b, opts->squash, opts->platform, limits(*opts), [&](uint64_t done, uint64_t total) {
                                      if (total) bar.set(done * 1000 / total);
                                  }};
            // Each layer's record goes out as soon as it is published, base first.
            auto store = ctx.store();
            auto r = layer::import_image(store, opts->path, im,
                                         [&](const layer::Imported& got) { return jsonl::emit(got.record(store)); });
            if (!r) return fail(std::move(r.error()).context("importing image " + opts->path));
            return 0;
        };
    });
}
}  // namespace

void add_import(CLI::App& app, Context& ctx) {
    add_tar_import(app, ctx);
    add_image_import(app, ctx);
}

}  // namespace dsec::layer_tool
