// A stack for a helper started with clone(CLONE_VM | CLONE_VFORK): it shares our memory,
// so it cannot run on our stack.
#pragma once

#include <sys/mman.h>

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#define DSEC_HELPER_STACK_ASAN 1
#endif
#endif

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

    // AddressSanitizer keeps one stack per thread, and the helper shares this thread's
    // memory and thread-local storage: it says it runs on this stack (entered(), first
    // thing in the helper), and the parent, once the helper has exec'd or exited, that
    // it is back on its own (returned()). Without them ASan warns at the helper's first
    // noreturn call. Nothing at all in other builds.
    void entered() {
#ifdef DSEC_HELPER_STACK_ASAN
        __sanitizer_start_switch_fiber(nullptr, base, kSize);
        __sanitizer_finish_switch_fiber(nullptr, &old_bottom_, &old_size_);
#endif
    }
    void returned() {
#ifdef DSEC_HELPER_STACK_ASAN
        if (old_size_ == 0) return;
        __sanitizer_start_switch_fiber(nullptr, old_bottom_, old_size_);
        __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
        old_size_ = 0;
#endif
    }

private:
    const void* old_bottom_ = nullptr;
    size_t old_size_ = 0;
};

}  // namespace dsec::ns
