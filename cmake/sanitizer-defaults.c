/* Linked into every program of the sanitizer build (cmake/sanitize.cmake): the options
 * its runtimes start with when ASAN_OPTIONS does not say otherwise. An allocation's
 * stack is kept 8 frames deep instead of 30: unwinding and storing those stacks was a
 * third of the CPU time of a sanitized `dsec-run exec` (132 ms -> 87 ms), and 8 frames
 * still name the caller that allocated. Leak detection stays on. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "malloc_context_size=8"; }
