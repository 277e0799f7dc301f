// Checking a layer image before the kernel mounts it. The store may sit on a shared
// filesystem that other nodes write, so nothing in it is taken on trust: the image must
// be a regular file (never a symlink), have the size its metadata records, and start
// with an EROFS superblock whose blocks fit in the file; with --verify its whole
// sha256 must match its digest, once per node (recorded in $DSEC_RUN/verified/<hex>
// with the file's identity, so a later first mount of the same file skips the rehash,
// and any change to it asks for one again).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "dsec/layer/store.h"
#include "dsec/sys/error.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/paths.h"

namespace dsec::mount {

/// Where the EROFS superblock starts, and the bytes of it that are read.
constexpr uint64_t kErofsSuperOffset = 1024;
constexpr size_t kErofsSuperSize = 128;

/// The superblock fields the checks use.
struct ErofsHeader {
    unsigned blkszbits = 0;
    uint32_t blocks = 0;
};

/// Reads the superblock `sb` (kErofsSuperSize bytes from kErofsSuperOffset) of an image
/// `file_size` bytes long: the magic, a block size of 512 bytes to 64 KiB, and blocks
/// that fit in the file. Errors: corrupt, naming `path`.
Result<ErofsHeader> check_erofs_header(std::string_view sb, uint64_t file_size, const std::string& path);

/// What identifies one version of a file on this node: device, inode, size, mtime and
/// ctime (ctime cannot be set back by anyone, so a rewrite in place changes it).
std::string file_identity(const struct stat& st);

/// $DSEC_RUN/verified/<hex>: the file_identity() of the image this node hashed whole
/// and found to match `digest`.
std::string verified_record_path(const Paths& paths, const std::string& digest);

/// Opens `layer`'s image and runs the checks above (the digest only with `verify`).
/// The returned fd is the file that was checked. Errors: not_found (image missing),
/// corrupt (a symlink or not a regular file, wrong size, bad header, digest mismatch),
/// io.
Result<Fd> open_checked_image(const Paths& paths, const layer::Store& store, const layer::Layer& layer, bool verify);

}  // namespace dsec::mount
