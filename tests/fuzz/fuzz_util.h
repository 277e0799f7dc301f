// What the fuzz targets share: the input as a file descriptor, and a scratch directory
// per run that goes with everything in it.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::fuzz {

/// The bytes as a memfd positioned at 0, for readers that take an fd. Aborts when the
/// kernel refuses one: a harness failure, not a finding.
inline Fd memfd_of(const uint8_t* data, size_t size) {
    Fd fd(::memfd_create("dsec-fuzz", MFD_CLOEXEC));
    if (fd.get() < 0) std::abort();
    size_t done = 0;
    while (done < size) {
        ssize_t n = ::write(fd.get(), data + done, size - done);
        if (n <= 0) std::abort();
        done += size_t(n);
    }
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) std::abort();
    return fd;
}

/// A fresh empty directory below $TMPDIR (or /tmp), removed with its contents on
/// destruction. Aborts when it cannot be made or removed.
class Scratch {
public:
    Scratch() {
        const char* tmp = std::getenv("TMPDIR");
        std::string base = std::string(tmp && *tmp ? tmp : "/tmp") + "/dsec-fuzz.XXXXXX";
        if (!::mkdtemp(base.data())) std::abort();
        path_ = base;
    }
    ~Scratch() {
        if (!fs::remove_tree(path_)) std::abort();
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

/// Splits the input at the first '\n': (first line, rest). Targets that need a small
/// option next to a body (a platform, a flag) read it from the first line.
inline std::pair<std::string, std::string_view> first_line(const uint8_t* data, size_t size) {
    std::string_view all(reinterpret_cast<const char*>(data), size);
    auto nl = all.find('\n');
    if (nl == std::string_view::npos) return {std::string(all), {}};
    return {std::string(all.substr(0, nl)), all.substr(nl + 1)};
}

}  // namespace dsec::fuzz
