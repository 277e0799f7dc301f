// Where the calling thread stands while it clones a sandbox's init, whose mount namespace
// is a copy of the thread's: the run directory's template namespace (root_template.h)
// when there is one, and, for a sandbox with binds (sandbox/bind.h says why), a private
// copy of that holding a small tmpfs over the init's start directory with the binds
// attached in it as b0, b1, ...
#pragma once

#include <string>
#include <vector>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::ns {

/// The calling thread in another mount namespace while this lives; back in the one it
/// was in (its root and working directory too) when it goes.
class BindStage {
public:
    BindStage() = default;
    BindStage(const BindStage&) = delete;
    BindStage& operator=(const BindStage&) = delete;
    ~BindStage();

    /// Moves the thread into `template_ns` (an nsfs descriptor; -1: stay in its own),
    /// then, with `mounts`, into a private copy of that (nothing propagates back), mounts
    /// a tmpfs at `dir` and attaches each of `mounts` (detached mounts) there as b<i>, a
    /// directory or an empty file as the mount's root is. Nothing to do without either.
    /// Errors: the failing setns/unshare/mount/move_mount step (the thread is back where it was).
    Status enter(int template_ns, const std::string& dir, const std::vector<int>& mounts);
    /// Back where the thread was (done by the destructor too).
    void leave();

private:
    Fd old_ns_, old_root_, old_cwd_;
};

}  // namespace dsec::ns
