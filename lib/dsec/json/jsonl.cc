#include "dsec/json/jsonl.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>

#include "dsec/sys/fs.h"

namespace dsec::jsonl {

namespace {
constexpr const char* kLeadingFields[] = {"type", "id", "v"};
std::mutex out_mutex;
std::atomic<bool> upstream_error{false};
}  // namespace

bool upstream_failed() { return upstream_error.load(); }

std::string line_of(const json& record) {
    auto text = [](const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); };
    std::string line = "{";
    auto put = [&](const std::string& key, const json& value) {
        if (line.size() > 1) line += ',';
        line += text(json(key)) + ':' + text(value);
    };
    // What the record is and what it is about come first, for a person reading the
    // stream; the rest in key order.
    for (const char* lead : kLeadingFields)
        if (auto it = record.find(lead); it != record.end()) put(lead, *it);
    if (!record.contains("v")) put("v", kVersion);
    for (auto& [key, value] : record.items())
        if (std::find(std::begin(kLeadingFields), std::end(kLeadingFields), key) == std::end(kLeadingFields))
            put(key, value);
    return line + "}";
}

Status emit(const json& record) {
    std::string line = line_of(record);
    line += '\n';
    std::lock_guard lock(out_mutex);
    return fs::write_all(STDOUT_FILENO, line, "stdout");
}

Result<std::optional<json>> Reader::next() {
    char* buf = nullptr;
    size_t cap = 0;
    for (;;) {
        ssize_t n = ::getline(&buf, &cap, in_);
        if (n < 0) {
            std::free(buf);
            return std::optional<json>{};
        }
        line_++;
        std::string text(buf, size_t(n));
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        if (text.find_first_not_of(" \t") == std::string::npos) continue;
        json record = json::parse(text, nullptr, false);
        if (record.is_discarded() || !record.is_object()) {
            std::free(buf);
            std::string msg = "stdin line " + std::to_string(line_) + ": not a JSON object";
            // `dsec-run ls -q | dsec-run destroy`: ids go as arguments, records on stdin.
            if (text.size() <= 128 && text.find_first_of("{}[]\" \t") == std::string::npos)
                msg += " (\"" + text + "\" looks like a bare id or name: give those as arguments, "
                       "e.g. through xargs, or pipe the records, as ls prints them without -q)";
            return fail(make_error(Code::bad_input, msg));
        }
        if (auto v = record.find("v"); v != record.end() && !(v->is_number_unsigned() && v->get<uint64_t>() >= 1 && v->get<uint64_t>() <= kVersion)) {
            std::free(buf);
            if (!v->is_number_unsigned() || v->get<uint64_t>() == 0)
                return fail(make_error(Code::bad_input, "stdin line " + std::to_string(line_) + ": \"v\" is not a version number"));
            return fail(make_error(Code::unsupported_version, "stdin line " + std::to_string(line_) + ": record version " +
                                                              v->dump() + " is newer than this dsec reads (" +
                                                              std::to_string(kVersion) + "); upgrade dsec"));
        }
        if (type_of(record) == "error") {
            upstream_error = true;
            std::string passthrough = text + "\n";
            std::lock_guard lock(out_mutex);
            (void)fs::write_all(out_fd_, passthrough, "stdout");
            continue;
        }
        std::free(buf);
        return std::optional<json>(std::move(record));
    }
}

std::string type_of(const json& record) {
    auto it = record.is_object() ? record.find("type") : record.end();
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<std::string> get_string(const json& record, const char* field) {
    auto it = record.find(field);
    if (it == record.end() || !it->is_string())
        return fail(make_error(Code::bad_input, std::string("record has no string field \"") + field + "\"").in_field(field));
    return it->get<std::string>();
}

}  // namespace dsec::jsonl
