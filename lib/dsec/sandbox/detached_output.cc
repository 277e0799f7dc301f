// A detached exec's output, state and end: the rotating files its supervisor writes,
// and what logs, wait and inspect read of them (detached.h describes the layout).
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <optional>

#include "dsec/sys/process.h"
#include "dsec/sandbox/detached.h"
#include "dsec/sandbox/detached_files.h"
#include "dsec/sandbox/limits.h"

namespace dsec::sandbox {

RotatingFile::RotatingFile(std::string dir, std::string name, uint64_t cap)
    : dir_(std::move(dir)), name_(std::move(name)), cap_(std::max<uint64_t>(cap, 1)) {}

Status RotatingFile::open() {
    std::string path = dir_ + "/" + name_;
    fd_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
    if (!fd_) return fail(sys_error("open", path));
    size_ = 0;
    return {};
}

Status RotatingFile::rotate() {
    std::string path = dir_ + "/" + name_;
    // What the older file held is gone now; the file being closed becomes the older one.
    dropped_ += previous_;
    previous_ = size_;
    if (::rename(path.c_str(), (path + ".1").c_str()) < 0) return fail(sys_error("rename", path));
    return open();
}

Status RotatingFile::write(std::string_view data, const std::function<bool()>& may_add) {
    total_ += data.size();
    while (!data.empty()) {
        if (stopped_) {
            dropped_ += data.size();
            return {};
        }
        if (size_ >= cap_) {
            if (!may_add()) {
                stopped_ = true;
                continue;
            }
            if (auto r = rotate(); !r) return fail(r.error());
        }
        size_t part = size_t(std::min<uint64_t>(cap_ - size_, data.size()));
        if (auto r = fs::write_all(fd_.get(), data.substr(0, part), dir_ + "/" + name_); !r) return fail(r.error());
        size_ += part;
        data.remove_prefix(part);
    }
    return {};
}

namespace detached_files {

Result<json> load(const Paths& paths, const std::string& id, const std::string& key) {
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    std::string path = dir(paths, id, key) + "/exec.json";
    auto text = valid_exec_key(key) ? fs::read_file(path) : Result<std::string>(fail(errno_error(ENOENT, "open", path)));
    if (!text) {
        if (text.error().err == ENOENT)
            return fail(make_error(Code::not_found, "sandbox \"" + id + "\" has no detached exec \"" + key + "\"", id));
        return fail(text.error());
    }
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail(make_error(Code::bad_input, "exec record does not parse", path));
    return j;
}

namespace {
// The result record, once the supervisor has written it.
std::optional<json> result_of(const Paths& paths, const std::string& id, const std::string& key) {
    auto text = fs::read_file(dir(paths, id, key) + "/result.json");
    if (!text) return std::nullopt;
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

bool supervisor_alive(const json& record) {
    int pid = record.value("pid", 0);
    return pid > 0 && proc::process_alive(pid, record.value("pid_start", 0ULL));
}
}  // namespace

json public_record(const Paths& paths, const std::string& id, json record) {
    std::string key = record.value("exec", "");
    record.erase("pid_start");
    record.erase("started_ns");
    if (auto result = result_of(paths, id, key)) {
        if (result->value("type", "") == "error") {
            record["state"] = "failed";
            record["error"] = result->value("message", "");
        } else {
            record["state"] = "exited";
            record["exit_code"] = result->value("exit_code", 0);
        }
    } else {
        record["state"] = supervisor_alive(record) ? "running" : "lost";
    }
    return record;
}

}  // namespace detached_files

namespace {
using namespace detached_files;

// The exec named, or the latest one when none is.
Result<json> resolve(const Paths& paths, const std::string& id, const std::string& key) {
    if (!key.empty()) return detached_files::load(paths, id, key);
    auto all = list_detached(paths, id);
    if (!all) return fail(all.error());
    if (all->empty()) return fail(make_error(Code::not_found, "sandbox \"" + id + "\" has no detached exec", id));
    return detached_files::load(paths, id, all->back().value("exec", ""));
}

// True once the exec will write no more: its result is there or its supervisor is gone.
bool ended(const Paths& paths, const std::string& id, const json& record) {
    return result_of(paths, id, record.value("exec", "")) || !supervisor_alive(record);
}

// Copies what `fd` holds from where it was left to `out`. Errors: the failing read/write.
Status drain(int fd, int out, const std::string& path) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("read", path));
        if (n == 0) return {};
        if (auto r = fs::write_all(out, std::string_view(buf, size_t(n))); !r) return fail(r.error());
    }
}

// One stream being followed: its current file, re-opened when the supervisor rotates it.
struct Followed {
    std::string path;
    int out;
    Fd fd;
    ino_t ino = 0;

    Status open_current() {
        fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) return errno == ENOENT ? Status{} : fail(sys_error("open", path));
        struct stat st;
        if (::fstat(fd.get(), &st) == 0) ino = st.st_ino;
        return {};
    }
    // Reads what is new, then, if the file was rotated meanwhile, the rest of the old one
    // and what the new one holds.
    Status pass() {
        if (!fd) return open_current();
        if (auto r = drain(fd.get(), out, path); !r) return r;
        struct stat st;
        if (::stat(path.c_str(), &st) < 0 || st.st_ino == ino) return {};
        if (auto r = drain(fd.get(), out, path); !r) return r;
        if (auto r = open_current(); !r || !fd) return r;
        return drain(fd.get(), out, path);
    }
};

// The whole of one stream: its older part, then its current one.
Status print_stream(const std::string& path, int out) {
    for (auto& p : {path + ".1", path}) {
        Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd && errno == ENOENT) continue;
        if (!fd) return fail(sys_error("open", p));
        if (auto r = drain(fd.get(), out, p); !r) return r;
    }
    return {};
}
}  // namespace

Result<std::vector<json>> list_detached(const Paths& paths, const std::string& id) {
    if (auto r = check_id(id); !r) return fail(r.error());
    if (!fs::exists(paths.state_dir(id)))
        return fail(make_error(Code::not_found, "no sandbox \"" + id + "\" (unknown or destroyed)", id));
    std::vector<json> records;
    auto keys = fs::list_dir(detached_dir(paths, id));
    if (!keys) return records;
    for (auto& key : *keys) {
        // One being started has no record yet.
        if (auto record = detached_files::load(paths, id, key)) records.push_back(std::move(*record));
    }
    std::sort(records.begin(), records.end(), [](const json& a, const json& b) {
        return a.value("started_ns", int64_t(0)) < b.value("started_ns", int64_t(0));
    });
    for (auto& r : records) r = public_record(paths, id, std::move(r));
    return records;
}

Status print_detached_output(const Paths& paths, const std::string& id, const std::string& key, bool follow,
                             int out_fd, int err_fd) {
    auto record = resolve(paths, id, key);
    if (!record) return fail(record.error());
    std::string dir = detached_files::dir(paths, id, record->value("exec", ""));
    if (!follow) {
        if (auto r = print_stream(dir + "/stdout", out_fd); !r) return r;
        return print_stream(dir + "/stderr", err_fd);
    }
    Followed streams[2] = {{dir + "/stdout", out_fd}, {dir + "/stderr", err_fd}};
    for (auto& s : streams) {
        if (auto r = print_stream(s.path + ".1", s.out); !r) return r;
        if (auto r = s.open_current(); !r) return r;
    }
    for (;;) {
        // Looked at before reading: what was written before the end is read in this pass.
        bool over = ended(paths, id, *record) || !fs::exists(dir);
        for (auto& s : streams)
            if (auto r = s.pass(); !r) return r;
        if (over) return {};
        if (interrupted()) return fail(interrupted_error());
        ::usleep(100000);
    }
}

namespace {
// Blocks until process `pid` (started at `start`) has exited, or interrupted() is seen.
Status wait_for_process(int pid, unsigned long long start) {
    Fd pidfd(int(::syscall(SYS_pidfd_open, pid, 0)));
    // Re-checked once the pidfd is held: the pid may have been reused before.
    if (!pidfd || !proc::process_alive(pid, start)) return {};
    struct pollfd p = {pidfd.get(), POLLIN, 0};
    for (;;) {
        int n = ::poll(&p, 1, 200);
        if (n > 0) return {};
        if (n < 0 && errno != EINTR) return fail(sys_error("poll"));
        if (interrupted()) return fail(interrupted_error());
    }
}
}  // namespace

Result<json> wait_detached(const Paths& paths, const std::string& id, const std::string& key) {
    auto record = resolve(paths, id, key);
    if (!record) return fail(record.error());
    std::string exec_key = record->value("exec", "");
    if (auto r = wait_for_process(record->value("pid", 0), record->value("pid_start", 0ULL)); !r) return fail(r.error());
    if (auto result = result_of(paths, id, exec_key)) {
        if (result->value("type", "") == "error") {
            Error e = make_error(code_from_name(result->value("code", "exec")).value_or(Code::exec), result->value("message", ""),
                                 result->value("path", ""));
            return fail(std::move(e).about(id));
        }
        return *result;
    }
    auto state = load(paths, id);
    if (!state || state->lifecycle == Lifecycle::destroying)
        return fail(make_error(Code::not_running, "sandbox \"" + id + "\" was destroyed before exec " + exec_key + " ended", id));
    return fail(make_error(Code::exec, "exec " + exec_key + " ended without a result (its supervisor was killed)", id));
}

Result<json> wait_sandbox(const Paths& paths, const std::string& id) {
    if (auto r = check_id(id); !r) return fail(r.error());
    auto state = load(paths, id);
    if (!state) return fail(state.error());
    if (auto r = wait_for_process(state->pid, state->pid_start); !r) return fail(r.error());
    return json{{"type", "sandbox"}, {"v", 1}, {"id", id}, {"state", "exited"}};
}

}  // namespace dsec::sandbox
