// Host paths bound into a sandbox (`create --bind SRC:DST[:ro|rw]`).
//
// The source is opened with O_PATH|O_NOFOLLOW and cloned as a detached mount (open_tree,
// recursive), made read-only (the default) and nosuid, nodev on the host. The clones are
// attached in a private mount namespace of the creating thread just before the init's
// user and mount namespaces are cloned from it: mounts copied into a namespace owned by
// a less privileged user namespace are locked by the kernel, so a read-only bind stays
// read-only (MNT_LOCK_READONLY) even for root of the sandbox with CAP_SYS_ADMIN and no
// seccomp, and a bind cannot be unmounted alone to show what is under it. The init
// clones each (a clone keeps the lock) and attaches it at DST, resolved beneath the
// sandbox's new root with openat2 (no symlink followed, no mount crossed: the image is
// hostile), creating DST (and missing directories above it) when absent. A read-write
// bind is written as the sandbox's ids are mapped: no idmapping, so the host's files
// show as nobody inside and only what the host's permissions grant that range goes.
//
// Never a way round the sandbox's own protections: DST may not be "/", nor under /proc,
// /dev, /sys or /tmp (the sandbox's own mounts), nor the init's executable; SRC must be
// a directory or a regular file (no device, FIFO or socket) and may neither lie under
// nor hold the layer store, the root or the run directory (the uppers and state of
// other sandboxes). --userns=host cannot have binds: nothing would lock them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"

namespace dsec::sandbox {

/// Most binds one sandbox may have.
constexpr size_t kMaxBinds = 64;

struct Bind {
    std::string src;  // host path, as given
    std::string dst;  // absolute path inside, normalised
    bool read_only = true;
};

/// Parses "SRC:DST[:ro|rw]" and checks DST (above). Errors: usage.
Result<Bind> parse_bind(const std::string& text);

/// DST's rules (above): absolute, no "." or ".." component, not a protected path.
/// Errors: usage.
Status check_bind_destination(const std::string& dst);

/// True when `a` and `b` (absolute, without trailing slash) are the same path or one
/// lies under the other.
bool paths_overlap(const std::string& a, const std::string& b);

/// Opens bind.src safely and returns its detached, recursive clone with the bind's
/// attributes set. `forbidden`: host directories the source may not overlap (store,
/// root, run). Errors: bad_input (not a directory or regular file, or overlapping a
/// forbidden directory), the failing open/open_tree/mount_setattr.
Result<Fd> open_bind_source(const Bind& bind, const std::vector<std::string>& forbidden);

/// [{"src","dst","mode":"ro"|"rw"}] for the state record.
nlohmann::json binds_record(const std::vector<Bind>& binds);

/// The binds of a state record's "binds" (entries that do not parse are left out).
std::vector<Bind> binds_from_record(const nlohmann::json& record);

}  // namespace dsec::sandbox
