// Copying files into and out of a sandbox, with the sandbox taken as hostile. One side
// walks the source and writes a tar stream on a pipe; the other reads it and writes the
// entries out (lib/dsec/copy). The sandbox's side runs in a child that has joined the
// sandbox (its mount namespace and cgroups, and whatever else ns::spawn_inside gives a
// child), opens the sandbox's "/" once and resolves every path from there with
// openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS). Whatever comes out of a sandbox is
// checked again on the host before anything is written.
//
// Rules, both ways: devices, FIFOs and sockets are skipped (and listed); symlinks are
// copied as symlinks and never followed; hard links only within the copied tree; caps on
// bytes and entries (copy::Limits), past which the copy stops with code too_large and
// what it wrote is removed. In: owners kept, setuid/setgid stripped. Out: owners are the
// caller's, setuid/setgid/sticky stripped.
#pragma once

#include <string>

#include "dsec/copy/sink.h"
#include "dsec/sandbox/state.h"

namespace dsec::sandbox {

/// Host `src` (file or directory) to `dst` inside sandbox `id`. As with cp -a: when
/// `dst` is an existing directory the source lands inside it under its own name, else
/// it is created as `dst`. The writing happens inside the sandbox, under the child's
/// credentials there, and never outside `dst` even while the sandbox swaps directories
/// for symlinks. Errors: not_found, not_running, too_large, bad_input, aborted (the host
/// side failed: nothing stays inside), the failing step.
Result<copy::Stats> copy_in(const Paths& paths, const std::string& id, const std::string& src, const std::string& dst,
                            const copy::Limits& limits);

/// The tar stream read from `tar_fd` extracted into the existing directory `dst` inside
/// sandbox `id`, under the same rules. Errors: as copy_in, bad_input for a hostile or
/// broken stream.
Result<copy::Stats> copy_in_tar(const Paths& paths, const std::string& id, int tar_fd, const std::string& dst,
                                const copy::Limits& limits);

/// `src` inside sandbox `id` to host `dst` (landing as in copy_in; a symlink at `dst`
/// is refused: an earlier copy may have brought it out of the sandbox). Errors: as
/// copy_in; on any error what this copy wrote on the host is removed.
Result<copy::Stats> copy_out(const Paths& paths, const std::string& id, const std::string& src,
                             const std::string& dst, const copy::Limits& limits);

/// `src` inside sandbox `id` written to `tar_fd` as a tar stream (owners the caller's).
/// On error the stream stops without its end-of-archive blocks.
Result<copy::Stats> copy_out_tar(const Paths& paths, const std::string& id, const std::string& src, int tar_fd,
                                 const copy::Limits& limits);

}  // namespace dsec::sandbox
