// The pieces of `dsec-bench reclaim` that need no sandbox: what each sandbox runs to
// touch its memory, the host guard that stops touching before the host runs short, and
// KSM's scan settings, saved and put back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::bench {

/// What the sandbox's own half of its touched memory holds. text: decimal number lines
/// (compresses about as typical process memory does); random: /dev/urandom bytes
/// (does not compress at all).
enum class Fill { text, random };

/// "text" or "random".
const char* fill_name(Fill f);

/// Parses --fill. Errors: usage for anything else.
Result<Fill> parse_fill(const std::string& text);

/// The shell command run in each sandbox (`dsec-run exec -- sh -c CMD`): two processes
/// that each read a block into their memory and then hold it (a dd blocked writing into
/// a pipe nobody reads): `shared` bytes from `shared_file` (the same in every sandbox)
/// and `own` bytes of `fill`, seeded differently in each sandbox. It returns once both
/// blocks are in memory. Pure.
std::string touch_command(Fill fill, uint64_t shared, uint64_t own, const std::string& shared_file);

/// Writes `bytes` of `fill` to a new file at `path` (text: lines of consecutive decimal
/// numbers; random: from getrandom). Errors: io.
Status write_fill(const std::string& path, Fill fill, uint64_t bytes);

/// Whether touching `need` more bytes leaves MemAvailable (`available`) at or above
/// `floor`. Pure.
bool room_for(uint64_t available, uint64_t need, uint64_t floor);

/// KSM's knobs the benchmark turns, as they were.
struct KsmSettings {
    std::string run, pages_to_scan, sleep_millisecs;
    nlohmann::json to_json() const;
};

/// Reads run, pages_to_scan and sleep_millisecs under `dir` (/sys/kernel/mm/ksm).
/// Errors: unsupported when the kernel has no KSM, io.
Result<KsmSettings> read_ksm_settings(const std::string& dir);

/// Writes those three under `dir` (empty ones left alone). Errors: the failing write.
Status write_ksm_settings(const std::string& dir, const KsmSettings& s);

/// Puts KSM's settings back as they were when it was made, on every path out.
class KsmRestore {
public:
    KsmRestore(std::string dir, KsmSettings saved) : dir_(std::move(dir)), saved_(std::move(saved)) {}
    KsmRestore(const KsmRestore&) = delete;
    KsmRestore& operator=(const KsmRestore&) = delete;
    ~KsmRestore() { (void)write_ksm_settings(dir_, saved_); }

private:
    std::string dir_;
    KsmSettings saved_;
};

}  // namespace dsec::bench
