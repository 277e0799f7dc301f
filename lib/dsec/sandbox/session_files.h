// Where a session's files live and how its shell is found: shared by open, exec, ls and
// close (session.h describes the layout).
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/cgroup/cgroup.h"
#include "dsec/sandbox/session.h"

namespace dsec::sandbox::session_files {

/// $DSEC_RUN/sandboxes/<id>/sessions
std::string all_dir(const Paths& paths, const std::string& id);
/// $DSEC_RUN/sandboxes/<id>/sessions/<key>
std::string dir(const Paths& paths, const SessionRef& ref);

/// The session's record (session.json). Errors: not_found, bad_input.
Result<json> load(const Paths& paths, const SessionRef& ref);

/// True while the record's shell is the process it started.
bool shell_alive(const json& record);

/// Pids of the sandbox's processes in the shell's session (its id is the shell's pid,
/// the shell having called setsid), the shell itself left out.
std::set<int> session_pids(const cgroup::Cgroup& cg, int shell_pid);

/// SIGKILL to every process of the shell's session but the shell and those in `keep`.
void kill_session_but(const cgroup::Cgroup& cg, int shell_pid, const std::set<int>& keep);

}  // namespace dsec::sandbox::session_files
