/* The entry point of dsec-run and dsec-init: the program's own pages mapped in a few
 * calls instead of a fault at a time.
 *
 * Where page faults are dear (a paravirtualised guest takes each through the hypervisor:
 * 12 us for an anonymous page and 22 us for a 64 KiB window of code on the hosts this was
 * measured on, against 0.8 us and 0.12 us a page for MADV_POPULATE_WRITE and
 * MADV_POPULATE_READ), a short-lived program's start is mostly faults: dsec-run took 72
 * to start and stop at a missing layer, 85 for an exec into a live sandbox.
 *
 * dsec-run starts at `dsec_start` (the linker's -e, CMakeLists.txt): before the C library
 * relocates anything, it populates the program's loadable segments, code and read-only
 * data for reading (page table entries for pages already in the page cache, nothing
 * copied), the writable ones for writing (35 pages, of which a start wrote 29 anyway).
 * Then it jumps to the C library's _start. A start then takes 23 faults instead of 72.
 * dsec-init, started for every sandbox that lives on, populates only what it reads.
 *
 * Of dsec-run's 3.6 MB of code, only the functions of its symbol-ordering file, laid out
 * first (CMakeLists.txt), are populated: about 230 pages, up to the marker the file names
 * last. Populating all of it (890 pages) cost more than its faults where faults are cheap:
 * on a guest taking 3.5 us per 64 KiB window of code and 1.3 us per anonymous page, with
 * 0.24 us per page populated, an exec's CPU was 0.84 of the whole text's populated and
 * within 5 % of no populating at all (scripts/bench-cpu-pair.sh, 150 rounds each).
 *
 * This runs before the C library has set up thread-local storage or relocated anything:
 * compiled without the stack protector, everything reached PC-relative, the kernel called
 * directly. x86-64 only; linked into the two static programs only, which no build
 * compiles with the sanitizers.
 */
#if defined(__x86_64__)
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/syscall.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { kPage = 4096 };

/* The ELF header of the running program, placed by the linker (hidden: no relocation). */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

/* madvise(2) without the C library (errno is thread-local: not there yet). A kernel
 * without MADV_POPULATE_* (before 5.14) refuses it, and the pages fault in as before. */
static void populate(uintptr_t lo, uintptr_t hi, long advice) {
    lo &= ~(uintptr_t)(kPage - 1);
    hi = (hi + kPage - 1) & ~(uintptr_t)(kPage - 1);
    if (hi <= lo) return;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_madvise), "D"(lo), "S"(hi - lo), "d"(advice)
                     : "rcx", "r11", "memory");
    (void)ret;
}

/* dsec-init, which may live for days in each of 10,000 sandboxes, leaves its writable
 * segments to fault in: populated, they would cost each idle sandbox the pages of them
 * it never writes (9 of its 20). */
#ifndef DSEC_PREFAULT_WRITABLE
#define DSEC_PREFAULT_WRITABLE 1
#endif

#ifdef DSEC_PREFAULT_HOT_TEXT
/* The last name of dsec-run's symbol-ordering file: the linker puts it right after the
 * functions a start runs. */
__attribute__((used, noinline, visibility("hidden"))) void dsec_hot_text_end(void) {}
#endif

/* Each loadable segment: read-only ones for reading, writable ones (data, relocated
 * data, bss) for writing. */
static void populate_segments(void) {
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    /* The load bias: where the segment holding the ELF header was put, less its address
     * in the file (0 for a PIE, the link address for a program that is not). */
    uintptr_t bias = (uintptr_t)eh;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
            bias -= ph[i].p_vaddr;
            break;
        }
    /* The unwind tables (.eh_frame_hdr, then .eh_frame) end the read-only segment after
     * .rodata; they are read only when an exception is thrown, which no exec or one-shot
     * does: about 100 of dsec-run's 230 read-only pages, not populated. */
    uintptr_t unwind = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME) unwind = bias + ph[i].p_vaddr;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        int w = (ph[i].p_flags & PF_W) != 0;
        if (w && !DSEC_PREFAULT_WRITABLE) continue;
        uintptr_t lo = bias + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (!(ph[i].p_flags & (PF_W | PF_X)) && lo <= unwind && unwind < hi) hi = unwind;
#ifdef DSEC_PREFAULT_HOT_TEXT
        uintptr_t end = (uintptr_t)&dsec_hot_text_end;
        if ((ph[i].p_flags & PF_X) && lo <= end && end < hi) hi = end;
#endif
        populate(lo, hi, w ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
    }
}

/* Called from dsec_start. Measured and left out: the heap and the stack (populating the
 * C library's first 132 KiB of heap, or 64 KiB of stack, each made a start about 5 %
 * slower), and the code again in a one-shot's init, a copy of this process that starts
 * with none of it mapped (the kernel copies no page table entries of a file mapping
 * never written): its one call cost what the 20 faults it saved did. */
__attribute__((used, visibility("hidden"))) void dsec_prefault_start(void) { populate_segments(); }

/* The entry point: %rdx (the dynamic linker's exit hook, none here) and %rsp are what
 * _start reads, so they are kept; %r12 is preserved by the call, and the stack is
 * aligned as a call expects (the kernel leaves it 16-byte aligned). */
__asm__(".pushsection .text\n"
        ".globl dsec_start\n"
        ".type dsec_start, @function\n"
        "dsec_start:\n"
        "  mov %rdx, %r12\n"
        "  call dsec_prefault_start\n"
        "  mov %r12, %rdx\n"
        "  jmp _start\n"
        ".size dsec_start, . - dsec_start\n"
        ".popsection\n");
#endif
