// How `ls` commands print: records when piped (or with --json), an aligned table for a
// person at a terminal, or ids only (-q).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dsec/sys/error.h"

namespace dsec::cli {

enum class ListStyle { records, table, ids };

/// The flags every `ls` takes: -q/--quiet and --json.
struct ListFlags {
    bool quiet = false;
    bool json = false;
    /// -q wins, then --json; otherwise a table when standard output is a terminal.
    ListStyle style() const;
};
void add_list_flags(CLI::App& cmd, ListFlags& flags);

/// Rows of text under a header, each column as wide as its widest cell.
class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    /// The table, one line per row, columns two spaces apart.
    std::string render() const;
    /// Writes render() to standard output. Errors: io.
    Status print() const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

/// 1536 -> "1.5K", 0 -> "0"; powers of 1024, one decimal under 10.
std::string human_bytes(uint64_t bytes);
/// Seconds -> "42s", "5m", "3h", "2d".
std::string human_age(double seconds);

}  // namespace dsec::cli
