// The two processes of a copy: dsec-run on the host and a child inside the sandbox,
// joined by a data pipe (the tar stream), a report pipe (the child's outcome, as JSON)
// and, into a sandbox, a verdict pipe on which the host says that its side completed:
// a tar stream that merely stops looks complete to libarchive, so the child keeps
// nothing until it hears so.
#pragma once

#include <functional>
#include <string>

#include "dsec/copy/sink.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Which way the data pipe runs.
enum class Flow { into_sandbox, out_of_sandbox };

/// The child's part: the sandbox's root (an fd of its "/"), its end of the data pipe,
/// and into a sandbox the verdict fd (-1 out of one).
using InsideWork = std::function<Result<copy::Stats>(int root_fd, int data_fd, int verdict_fd)>;
/// The host's part, on its end of the data pipe.
using HostWork = std::function<Status(int data_fd)>;

/// Runs `inside` in a child within sandbox `id` (non-dumpable, holding no descriptor but
/// its pipes) and `host` here. Returns the child's stats, or the error that explains the
/// failure best: the producer's own (a cap, a missing source) over the consumer's view
/// of a cut stream. Errors: not_found, not_running, copy_failed (the child died without
/// a word), and those of either side.
Result<copy::Stats> run_copy(const Paths& paths, const std::string& id, Flow flow, const InsideWork& inside,
                             const HostWork& host);

/// In the child, after the data stream ended: whether the host completed its side.
bool host_completed(int verdict_fd);

}  // namespace dsec::sandbox
