#include "dsec/sys/process.h"

#include <signal.h>

#include <cerrno>
#include <charconv>
#include <string>

#include "dsec/sys/fs.h"

namespace dsec::proc {

namespace {

// The next space-separated field of `rest`, consumed; empty when none is left.
std::string_view next_field(std::string_view& rest) {
    size_t begin = rest.find_first_not_of(' ');
    if (begin == std::string_view::npos) return rest = {};
    size_t end = rest.find(' ', begin);
    std::string_view field = rest.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    return field;
}

template <typename T>
bool to_number(std::string_view field, T& out) {
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
    return ec == std::errc() && end == field.data() + field.size();
}

}  // namespace

std::optional<Stat> parse_stat(std::string_view text) {
    size_t close = text.rfind(')');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    Stat s;
    std::string_view state = next_field(rest);
    if (state.size() != 1) return std::nullopt;
    s.state = state[0];
    if (!to_number(next_field(rest), s.ppid) || !to_number(next_field(rest), s.pgrp) ||
        !to_number(next_field(rest), s.session))
        return std::nullopt;
    // Fields 7 to 21 are not read; field 22 is the start time.
    for (int field = 7; field < 22; field++)
        if (next_field(rest).empty()) return std::nullopt;
    if (!to_number(next_field(rest), s.start)) return std::nullopt;
    return s;
}

std::optional<Stat> read_stat(int pid) {
    if (pid <= 0) return std::nullopt;
    auto text = fs::read_file("/proc/" + std::to_string(pid) + "/stat");
    if (!text) return std::nullopt;
    return parse_stat(*text);
}

unsigned long long process_start(int pid) {
    auto stat = read_stat(pid);
    return stat ? stat->start : 0;
}

bool process_alive(int pid, unsigned long long start) {
    if (pid <= 0) return false;
    if (::kill(pid, 0) < 0 && errno == ESRCH) return false;
    // A zombie has exited and only waits for its parent: it runs nothing and holds no
    // namespace, so it counts as dead (its state is Z, or X while reaped).
    auto stat = read_stat(pid);
    if (!stat || stat->state == 'Z' || stat->state == 'X') return false;
    return start == 0 || stat->start == start;
}

int session_of(int pid) {
    auto stat = read_stat(pid);
    return stat ? stat->session : 0;
}

std::optional<std::string_view> status_field(std::string_view text, std::string_view name) {
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        auto line = text.substr(at, end - at);
        if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':') {
            auto value = line.substr(name.size() + 1);
            auto first = value.find_first_not_of(" \t");
            if (first == std::string_view::npos) return std::string_view{};
            return value.substr(first, value.find_last_not_of(" \t") + 1 - first);
        }
        at = end + 1;
    }
    return std::nullopt;
}

}  // namespace dsec::proc
