// A stack for a helper started with clone(CLONE_VM | CLONE_VFORK): it shares our memory,
// so it cannot run on our stack.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace dsec::ns {

struct HelperStack {
    static constexpr size_t kSize = 256 * 1024;
    void* base = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    HelperStack() = default;
    HelperStack(const HelperStack&) = delete;
    HelperStack& operator=(const HelperStack&) = delete;
    ~HelperStack() {
        if (base != MAP_FAILED) ::munmap(base, kSize);
    }
    /// Where the stack starts (it grows down).
    void* top() const { return static_cast<char*>(base) + kSize; }
};

}  // namespace dsec::ns
