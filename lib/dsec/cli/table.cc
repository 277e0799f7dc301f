#include "dsec/cli/table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "dsec/sys/fs.h"

namespace dsec::cli {

ListStyle ListFlags::style() const {
    if (quiet) return ListStyle::ids;
    if (json) return ListStyle::records;
    return ::isatty(STDOUT_FILENO) ? ListStyle::table : ListStyle::records;
}

void add_list_flags(CLI::App& cmd, ListFlags& flags) {
    cmd.add_flag("-q,--quiet", flags.quiet, "print only ids (digests for layers), one per line");
    cmd.add_flag("--json", flags.json, "records even on a terminal (the default when piped)");
}

std::string Table::render() const {
    std::vector<size_t> width(header_.size(), 0);
    auto widen = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); i++) width[i] = std::max(width[i], row[i].size());
    };
    widen(header_);
    for (auto& r : rows_) widen(r);
    std::string out;
    auto line = [&](const std::vector<std::string>& row) {
        std::string l;
        for (size_t i = 0; i < width.size(); i++) {
            std::string cell = i < row.size() ? row[i] : "";
            l += cell;
            if (i + 1 < width.size()) l += std::string(width[i] - cell.size() + 2, ' ');
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
    };
    line(header_);
    for (auto& r : rows_) line(r);
    return out;
}

Status Table::print() const { return fs::write_all(STDOUT_FILENO, render()); }

std::string human_bytes(uint64_t bytes) {
    static const char* units[] = {"", "K", "M", "G", "T", "P"};
    double v = double(bytes);
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024;
        u++;
    }
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(bytes));
    else if (v < 10) std::snprintf(buf, sizeof buf, "%.1f%s", v, units[u]);
    else std::snprintf(buf, sizeof buf, "%.0f%s", v, units[u]);
    return buf;
}

std::string human_age(double seconds) {
    char buf[32];
    if (seconds < 0) seconds = 0;
    if (seconds < 120) std::snprintf(buf, sizeof buf, "%.0fs", seconds);
    else if (seconds < 7200) std::snprintf(buf, sizeof buf, "%.0fm", seconds / 60);
    else if (seconds < 172800) std::snprintf(buf, sizeof buf, "%.0fh", seconds / 3600);
    else std::snprintf(buf, sizeof buf, "%.0fd", seconds / 86400);
    return buf;
}

}  // namespace dsec::cli
