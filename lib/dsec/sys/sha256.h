// SHA-256, streamed, by OpenSSL's libcrypto (its assembly picks the CPU's SHA extensions
// where there are some). Layers are named by the digest of their image file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dsec/sys/error.h"

struct SHA256state_st;  // OpenSSL's SHA256_CTX, kept out of every includer

namespace dsec {

/// Incremental SHA-256: update() any number of times, then hex() once. Copying copies
/// the state so far.
class Sha256 {
public:
    Sha256();
    Sha256(const Sha256& other);
    Sha256& operator=(const Sha256& other);
    Sha256(Sha256&& other) noexcept;
    Sha256& operator=(Sha256&& other) noexcept;
    ~Sha256();
    void update(const void* data, size_t len);
    void update(std::string_view s) { update(s.data(), s.size()); }
    /// Finishes and returns the 64 lowercase hex digits. Call once.
    std::string hex();

private:
    SHA256state_st* ctx_;
};

/// The hex SHA-256 of the file at `path`, read in large chunks (bounded memory).
Result<std::string> sha256_file(const std::string& path);

/// The same for the file open as `fd`, from offset 0 on (pread: its offset stays);
/// `path` names it in errors.
Result<std::string> sha256_fd(int fd, const std::string& path);

}  // namespace dsec
