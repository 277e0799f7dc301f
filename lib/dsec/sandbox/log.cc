#include "dsec/sandbox/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "dsec/layer/store.h"

namespace dsec::sandbox {

namespace {
// Now as RFC 3339 UTC with milliseconds: commands a few ms apart stay in order.
std::string now_ms() {
    auto now = std::chrono::system_clock::now();
    return layer::rfc3339_ms(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count());
}

// Output kept in a record: valid UTF-8 is not guaranteed, so nlohmann's dump replaces
// what is not (see append_log).
void add_stream(json& record, const std::string& name, const std::string& text, bool truncated) {
    record[name] = text.size() > kLogOutputCap ? text.substr(0, kLogOutputCap) : text;
    if (truncated || text.size() > kLogOutputCap) record[name + "_truncated"] = true;
}
}  // namespace

std::string log_file(const Paths& paths, const std::string& id) { return paths.state_dir(id) + "/log.jsonl"; }

json log_record(const std::string& id, const std::string& kind) {
    return json{{"type", "log"}, {"v", 1}, {"id", id}, {"time", now_ms()}, {"kind", kind}};
}

json copy_log_record(const std::string& id, const std::string& src, const std::string& dst, bool into,
                     uint64_t duration_ms, const Result<copy::Stats>& outcome) {
    json entry = log_record(id, "cp");
    entry["src"] = src;
    entry["dst"] = dst;
    entry["duration_ms"] = duration_ms;
    entry["exit_code"] = outcome ? 0 : 1;
    if (outcome) entry[into ? "bytes_in" : "bytes_out"] = outcome->bytes;
    else entry["error"] = code_name(outcome.error().code);
    return entry;
}

void add_result(json& record, const ExecResult& r) {
    record["exit_code"] = r.exit_code;
    record["signal"] = r.signal ? json(r.signal) : json(nullptr);
    record["timed_out"] = r.timed_out;
    record["duration_ms"] = r.duration_ms;
    record["bytes_in"] = r.in_bytes;
    record["bytes_out"] = r.out_bytes + r.err_bytes;
    record["stdout_sha256"] = r.out_sha256;
    record["stderr_sha256"] = r.err_sha256;
    add_stream(record, "stdout", r.out, r.out_truncated);
    add_stream(record, "stderr", r.err, r.err_truncated);
    if (!r.note.empty()) record["note"] = r.note;
}

Status append_log(const Paths& paths, const std::string& id, const json& record) {
    std::string path = log_file(paths, id);
    std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
    if (!fd) return fail(sys_error("open", path));
    return fs::write_all(fd.get(), line, path);
}

uint64_t log_position(const Paths& paths, const std::string& id) {
    struct stat st;
    if (::stat(log_file(paths, id).c_str(), &st) < 0) return 0;
    return uint64_t(st.st_size);
}

Status print_log(const Paths& paths, const std::string& id, bool follow, int out_fd) {
    std::string path = log_file(paths, id);
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    Fd fd;
    uint64_t offset = 0;
    std::string partial;
    char buf[65536];
    for (;;) {
        // Opened once it exists: a sandbox without a command yet has no log.
        if (!fd) fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd && errno != ENOENT) return fail(sys_error("open", path));
        ssize_t n = 0;
        while (fd && (n = ::pread(fd.get(), buf, sizeof buf, off_t(offset))) > 0) {
            offset += uint64_t(n);
            partial.append(buf, size_t(n));
            // A line still being appended waits for its end.
            auto end = partial.rfind('\n');
            if (end == std::string::npos) continue;
            if (auto r = fs::write_all(out_fd, std::string_view(partial).substr(0, end + 1)); !r) return fail(r.error());
            partial.erase(0, end + 1);
        }
        if (n < 0 && errno != EINTR) return fail(sys_error("read", path));
        if (!follow || interrupted() || !fs::exists(paths.state_dir(id))) return {};
        ::usleep(100000);
    }
}

Status keep_log(const Paths& paths, const std::string& id, const std::string& dir) {
    auto text = fs::read_file(log_file(paths, id));
    if (!text) return text.error().err == ENOENT ? Status{} : fail(text.error());
    if (auto r = fs::mkdir_p(dir, 0700); !r) return fail(r.error());
    return fs::atomic_write(dir + "/" + id + ".log.jsonl", *text, 0600);
}

}  // namespace dsec::sandbox
