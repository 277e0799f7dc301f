// Where a sandbox's binds wait for the clone of its namespaces (sandbox/bind.h says why):
// a private mount namespace of the calling thread, holding a small tmpfs over the init's
// start directory with the binds attached in it as b0, b1, ...
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

/// The calling thread in a mount namespace of its own while this lives; back in the one
/// it was in (and its working directory) when it goes.
class BindStage {
public:
    BindStage() = default;
    BindStage(const BindStage&) = delete;
    BindStage& operator=(const BindStage&) = delete;
    ~BindStage();

    /// Leaves the thread's mount namespace for a private copy (nothing propagates back
    /// to the host), mounts a tmpfs at `dir` and attaches each of `mounts` (detached
    /// mounts) there as b<i>, a directory or an empty file as the mount's root is.
    /// Nothing to do without mounts. `current_ns`: the namespace the thread is in, when
    /// it cannot be named by /proc/thread-self (in the template's, root_template.h).
    /// Errors: the failing unshare/mount/move_mount step (the thread is back where it was).
    Status enter(const std::string& dir, const std::vector<int>& mounts, int current_ns = -1);
    /// Back where the thread was (done by the destructor too).
    void leave();

private:
    Fd old_ns_, old_cwd_;
};

}  // namespace dsec::ns
