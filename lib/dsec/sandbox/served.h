// Exec served by the sandbox's init (the protocol is in ns/confine.h): create gives the
// init a listening socket in the sandbox's state directory, and exec asks the init to
// fork the command, which then inherits the init's namespaces, cgroups and confinement
// instead of joining them from outside.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsec/ns/join.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::sandbox {

/// A listening socket at `dir`/`name` for the init to serve execs on (any old one there
/// is replaced). Errors: the failing socket call.
Result<Fd> listen_for_execs(const std::string& dir, const std::string& name);

/// What the init's child needs: it execs as root of the sandbox, in `workdir`, trying
/// `candidates` in turn (exec_candidates).
struct ServedCommand {
    std::string workdir;
    std::vector<std::string> argv, env, candidates;
    bool ends_sandbox = false;  // a one-shot's own command (DSEC_EXEC_ENDS_SANDBOX)
};

/// Asks the init listening at `dir`/`name` to start `cmd` with stdin, stdout, stderr and
/// the failure pipe's write end `fds`: the request sent on a connection of its own, whose
/// answer await_served reads. A listening socket queues it, so it can be sent while the
/// init that will serve it is still being set up (it is served once that init is ready).
/// nullopt: nothing was sent (no socket: a sandbox made before, or no init listening; a
/// request too large), and the join should run the command.
Result<std::optional<Fd>> send_served(const std::string& dir, const std::string& name, const ServedCommand& cmd,
                                      const int (&fds)[4]);
/// The init's answer on `sock`: the command started, or nullopt when the init refused it
/// (its reason, such as a policy that forbids what it needs, is the join's to meet).
/// Errors only once the init may have started it: a reply that is not one.
Result<std::optional<ns::Joined>> await_served(Fd sock, const std::string& dir, const std::string& name);

}  // namespace dsec::sandbox
