// dsec-layer import: an archive (any compression libarchive reads) extracted into a
// scratch staging tree with the hostile-input rules, as a plain or an OCI layer (the
// first byte's low bit), with small caps so that a run stays fast. Afterwards nothing
// may exist outside the tree.
#include "dsec/layer/extract.h"
#include "fuzz_util.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    fuzz::Scratch scratch;
    std::string root = scratch.path() + "/tree";
    if (::mkdir(root.c_str(), 0755) < 0) std::abort();
    auto tree = layer::SafeTree::open(root);
    if (!tree) std::abort();
    Fd in_fd = fuzz::memfd_of(data + 1, size - 1);
    layer::Input in{in_fd.get(), "fuzz", nullptr, {}};
    layer::ExtractOptions opts;
    opts.oci = data[0] & 1;
    opts.squash = data[0] & 2;
    opts.limits.max_bytes = 4 << 20;
    opts.limits.max_entries = 2000;
    layer::ExtractStats stats;
    (void)layer::extract(in, *tree, opts, stats);
    // The scratch directory holds the tree and nothing else.
    auto names = fs::list_dir(scratch.path());
    if (!names || names->size() != 1) std::abort();
    return 0;
}
