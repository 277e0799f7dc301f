#include "dsec/sys/parse.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace dsec::parse {

namespace {
Error usage(const std::string& what, const std::string& text, const std::string& hint) {
    return make_error(Code::usage, "invalid " + what + " \"" + text + "\": " + hint);
}

// Reads a non-negative decimal number at `pos`, moving `pos` past it.
bool read_number(const std::string& s, size_t& pos, double& out) {
    size_t start = pos;
    while (pos < s.size() && (std::isdigit((unsigned char)s[pos]) || s[pos] == '.')) pos++;
    if (pos == start) return false;
    char* end = nullptr;
    std::string num = s.substr(start, pos - start);
    out = std::strtod(num.c_str(), &end);
    return end && *end == '\0' && std::isfinite(out);
}
}  // namespace

Result<uint64_t> parse_size(const std::string& text) {
    const char* hint = "expected a size such as 512M, 2G or 1048576";
    size_t pos = 0;
    double n;
    if (!read_number(text, pos, n)) return fail(usage("size", text, hint));
    std::string unit = text.substr(pos);
    // Accept "G", "g", "GB", "GiB".
    if (unit.size() >= 2 && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
    if (unit.size() == 2 && unit.back() == 'i') unit.pop_back();
    double mult = 1;
    if (unit.empty()) mult = 1;
    else if (unit.size() == 1) {
        switch (std::toupper((unsigned char)unit[0])) {
            case 'B': mult = 1; break;
            case 'K': mult = 1024.0; break;
            case 'M': mult = 1024.0 * 1024; break;
            case 'G': mult = 1024.0 * 1024 * 1024; break;
            case 'T': mult = 1024.0 * 1024 * 1024 * 1024; break;
            default: return fail(usage("size", text, hint));
        }
    } else {
        return fail(usage("size", text, hint));
    }
    double bytes = n * mult;
    if (bytes < 1 || bytes > 1e18) return fail(usage("size", text, "out of range"));
    return uint64_t(bytes);
}

Result<double> parse_cpus(const std::string& text) {
    size_t pos = 0;
    double n;
    if (!read_number(text, pos, n) || pos != text.size() || n <= 0 || n > 4096)
        return fail(usage("CPU count", text, "expected a positive number such as 0.5 or 2"));
    return n;
}

Result<uint64_t> parse_duration_ms(const std::string& text) {
    const char* hint = "expected a duration such as 30s, 10m, 1h30m or 500ms";
    if (text.empty()) return fail(usage("duration", text, hint));
    size_t pos = 0;
    double total = 0;
    while (pos < text.size()) {
        double n;
        if (!read_number(text, pos, n)) return fail(usage("duration", text, hint));
        size_t ustart = pos;
        while (pos < text.size() && std::isalpha((unsigned char)text[pos])) pos++;
        std::string unit = text.substr(ustart, pos - ustart);
        double mult;
        if (unit.empty() || unit == "s") mult = 1000;
        else if (unit == "ms") mult = 1;
        else if (unit == "m") mult = 60e3;
        else if (unit == "h") mult = 3600e3;
        else if (unit == "d") mult = 86400e3;
        else return fail(usage("duration", text, hint));
        total += n * mult;
    }
    // At most some 31 years: a deadline that far in nanoseconds still fits in 64 bits.
    if (total > 1e12) return fail(usage("duration", text, "out of range (at most 11574d)"));
    return uint64_t(total);
}

std::string format_duration_ms(uint64_t ms) {
    if (ms == 0) return "0s";
    static const std::pair<uint64_t, const char*> units[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
    std::string out;
    for (auto [size, name] : units)
        if (ms >= size) {
            out += std::to_string(ms / size) + name;
            ms %= size;
        }
    return out;
}

Result<uint64_t> parse_count(const std::string& text, const char* what) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || !end || *end || n == 0 || !std::isdigit((unsigned char)text[0]))
        return fail(usage(what, text, "expected a positive whole number"));
    return uint64_t(n);
}

Result<User> parse_user(const std::string& text) {
    auto num = [&](const std::string& s) -> Result<unsigned> {
        char* end = nullptr;
        unsigned long n = std::strtoul(s.c_str(), &end, 10);
        if (s.empty() || *end || !std::isdigit((unsigned char)s[0]) || n > 0xfffffffeUL)
            return fail(usage("user", text, "expected UID or UID:GID (numbers)"));
        return unsigned(n);
    };
    auto colon = text.find(':');
    auto uid = num(text.substr(0, colon));
    if (!uid) return fail(uid.error());
    User u{*uid, *uid};
    if (colon != std::string::npos) {
        auto gid = num(text.substr(colon + 1));
        if (!gid) return fail(gid.error());
        u.gid = *gid;
    }
    return u;
}

bool is_numeric_user(const std::string& text) {
    return !text.empty() && text.find_first_not_of("0123456789:") == std::string::npos;
}

Status check_user(const std::string& text) {
    if (is_numeric_user(text)) {
        if (auto u = parse_user(text); !u) return fail(u.error());
        return {};
    }
    auto name_ok = [](const std::string& n) {
        if (n.empty() || n.size() > 32 || !(std::islower((unsigned char)n[0]) || n[0] == '_' || std::isdigit((unsigned char)n[0])))
            return false;
        return std::all_of(n.begin(), n.end(), [](unsigned char c) {
            return std::islower(c) || std::isdigit(c) || c == '_' || c == '-' || c == '.';
        });
    };
    auto colon = text.find(':');
    std::string who = text.substr(0, colon), group = colon == std::string::npos ? "" : text.substr(colon + 1);
    if (!name_ok(who) || (colon != std::string::npos && !name_ok(group)))
        return fail(usage("user", text, "expected UID, NAME, UID:GID or NAME:GROUP"));
    return {};
}

Status check_env(const std::vector<std::string>& env, const char* option) {
    for (auto& e : env)
        if (e.find('=') == std::string::npos || e[0] == '=')
            return fail(make_error(Code::usage, std::string(option) + " \"" + e + "\" is not of the form K=V"));
    return {};
}

Result<std::map<std::string, std::string>> parse_labels(const std::vector<std::string>& labels) {
    std::map<std::string, std::string> out;
    for (auto& l : labels) {
        auto eq = l.find('=');
        if (eq == std::string::npos || eq == 0)
            return fail(make_error(Code::usage, "label \"" + l + "\" is not of the form key=value"));
        out[l.substr(0, eq)] = l.substr(eq + 1);
    }
    return out;
}

}  // namespace dsec::parse
