// dsec-run cp: the tar stream that comes from a sandbox (or from stdin) read through
// the copy guard into a directory, committed or abandoned (the first byte's low bit).
// Afterwards nothing may exist outside the destination, and an abandoned copy leaves
// it empty.
#include <sys/stat.h>

#include "dsec/copy/disk.h"
#include "dsec/copy/guard.h"
#include "dsec/copy/tar.h"
#include "fuzz_util.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    fuzz::Scratch scratch;
    std::string dest = scratch.path() + "/dest";
    if (::mkdir(dest.c_str(), 0755) < 0) std::abort();
    Fd dir(::open(dest.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) std::abort();
    copy::DiskWriter writer(std::move(dir), "dest", data[0] & 2);
    copy::Limits limits{4 << 20, 2000};
    copy::Policy policy;
    policy.strip = 06000;
    if (data[0] & 4) policy.top = "top";
    copy::Guard guard(writer, limits, policy);
    Fd in = fuzz::memfd_of(data + 1, size - 1);
    auto r = copy::read_tar(in.get(), "fuzz", guard);
    bool abandon = !r || (data[0] & 1);
    if (abandon) guard.abandon();
    else if (!guard.commit()) guard.abandon();
    auto names = fs::list_dir(scratch.path());
    if (!names || names->size() != 1) std::abort();
    if (abandon && !r) {
        auto left = fs::list_dir(dest);
        if (!left || !left->empty()) std::abort();
    }
    return 0;
}
