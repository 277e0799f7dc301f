#include "dsec/ns/clone_on_stack.h"

#include <sys/syscall.h>

#include <cerrno>

namespace dsec::ns {

long clone3_on_stack(clone_args* args, int (*fn)(void*), void* arg) {
#if defined(__x86_64__)
    // The child returns from the system call on its new stack (the kernel sets its stack
    // pointer to stack + stack_size) with every register but rax, rcx and r11 as ours:
    // fn and arg wait in callee-saved registers. rbp cleared ends a debugger's backtrace
    // there; the stack's top is page-aligned, so the call leaves it as the ABI wants.
    long ret;
    register int (*r_fn)(void*) asm("r12") = fn;
    register void* r_arg asm("r13") = arg;
    asm volatile(
        "syscall\n\t"
        "test %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        "xor %%ebp, %%ebp\n\t"
        "mov %%r13, %%rdi\n\t"
        "call *%%r12\n\t"
        "mov %%eax, %%edi\n\t"
        "mov %[exit], %%eax\n\t"
        "syscall\n\t"
        "hlt\n"
        "1:"
        : "=a"(ret)
        : "0"(long(SYS_clone3)), "D"(args), "S"(sizeof *args), "r"(r_fn), "r"(r_arg), [exit] "i"(SYS_exit)
        : "rcx", "r11", "memory");
    if (ret < 0) {
        errno = int(-ret);
        return -1;
    }
    return ret;
#else
    (void)args;
    (void)fn;
    (void)arg;
    errno = ENOSYS;
    return -1;
#endif
}

}  // namespace dsec::ns
