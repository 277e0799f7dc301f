// dsec-reclaim ttl: sandboxes past their --ttl (age) or --idle-ttl (time since the last
// exec or cp, or since create when there was none) are destroyed.
#pragma once

#include <cstdint>

#include "dsec/reclaim/report.h"
#include "dsec/sys/paths.h"

namespace dsec::reclaim {

/// Why a sandbox is due, if it is.
enum class Expiry { none, ttl, idle_ttl };
/// "none", "ttl", "idle_ttl".
const char* expiry_name(Expiry e);

/// Judges one sandbox from its state ("ttl", "idle_ttl" in seconds, "created_unix"),
/// `now`, the Unix time of its last use (0: never) and whether a command runs in it now
/// (`busy`: never idle). Pure: no system access.
Expiry due(const json& state, int64_t now, int64_t last_use, bool busy);

/// Destroys every sandbox that is due; one {"type":"event","event":"expired","reason",
/// "age_s","idle_s"} each (`dry_run`: reported, not destroyed). Sandboxes being created
/// or destroyed are left to those who do it. Errors: only when `report` cannot emit.
Status enforce_ttl(const dsec::Paths& paths, bool dry_run, const Report& report);

}  // namespace dsec::reclaim
