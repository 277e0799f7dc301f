/* The init of a sandbox (init.c): pid 1 of its pid namespace, started by ns::start_init
 * (spawn.h). Two ways to run it, the same code either way:
 *  - dsec-init (tools/init/dsec-init.c), a small static program the start executes: a
 *    sandbox that lives on holds only a few pages of the host's memory for its init;
 *  - in a copy of dsec-run itself, with no execve (InitSpec::in_process): for a one-shot
 *    sandbox (dsec-run run), which lives no longer than the dsec-run that made it, so its
 *    init's size does not matter and starting a program would be the one cost.
 */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* The most v1 cgroup join files the init receives with its confinement (one per v1
 * hierarchy beyond the memory one). */
#define DSEC_INIT_MAX_JOINS 16

/* Sets the sandbox up from its descriptors and arguments (init.c says which), reports
 * ready, then serves and reaps until the sandbox is destroyed. Returns (2) only when not
 * started as pid 1 with such arguments. */
int dsec_init_main(int argc, char **argv);

/* The same, for a one-shot sandbox's init: once the one-shot's own command (its request
 * marked DSEC_EXEC_ENDS_SANDBOX, confine.h) has ended and nothing else is at work in the
 * sandbox, it exits, and with it the sandbox's namespaces go while dsec-run is still
 * reading the command's output and before it comes to destroy the sandbox (init.c,
 * leave_if_done). */
int dsec_init_main_one_shot(int argc, char **argv);

#ifdef __cplusplus
}
#endif
