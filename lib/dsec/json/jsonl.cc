#include "dsec/json/jsonl.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include "dsec/sys/fs.h"

namespace dsec::jsonl {

namespace {
std::mutex out_mutex;
std::atomic<bool> upstream_error{false};
}  // namespace

bool upstream_failed() { return upstream_error.load(); }

Status emit(json record) {
    if (!record.contains("v")) record["v"] = 1;
    std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace);
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
            return fail(make_error("bad_input", "stdin line " + std::to_string(line_) + ": not a JSON object"));
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
        return fail(make_error("bad_input", std::string("record has no string field \"") + field + "\""));
    return it->get<std::string>();
}

}  // namespace dsec::jsonl
