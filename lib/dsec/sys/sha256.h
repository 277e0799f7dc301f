// SHA-256 (FIPS 180-4), streamed. Layers are named by the digest of their image file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "dsec/sys/error.h"

namespace dsec {

/// Incremental SHA-256: update() any number of times, then hex() once.
class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t len);
    void update(std::string_view s) { update(s.data(), s.size()); }
    /// Finishes and returns the 64 lowercase hex digits. Call once.
    std::string hex();

private:
    void block(const uint8_t* p);
    std::array<uint32_t, 8> h_;
    std::array<uint8_t, 64> buf_{};
    size_t used_ = 0;
    uint64_t total_ = 0;
};

/// The hex SHA-256 of the file at `path`, read in large chunks (bounded memory).
Result<std::string> sha256_file(const std::string& path);

/// The same for the file open as `fd`, from offset 0 on (pread: its offset stays);
/// `path` names it in errors.
Result<std::string> sha256_fd(int fd, const std::string& path);

}  // namespace dsec
