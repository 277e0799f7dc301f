// Starting a detached exec and its supervisor (detached.h describes the layout).
#include "dsec/sandbox/detached.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <thread>

#include "dsec/sys/process.h"
#include "dsec/sandbox/detached_files.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sys/id.h"

namespace dsec::sandbox {

std::string detached_dir(const Paths& paths, const std::string& id) { return paths.state_dir(id) + "/execs"; }

bool valid_exec_key(const std::string& key) {
    if (key.size() != 8) return false;
    for (char c : key)
        if (!std::isxdigit((unsigned char)c) || std::isupper((unsigned char)c)) return false;
    return true;
}

namespace detached_files {

std::string dir(const Paths& paths, const std::string& id, const std::string& key) {
    return detached_dir(paths, id) + "/" + key;
}

bool may_add(const Paths& paths, const std::string& id) {
    auto held = lock(paths, id);
    if (!held) return false;
    auto state = load(paths, id);
    return state && state->lifecycle != Lifecycle::destroying;
}

Status write_if_kept(const Paths& paths, const std::string& id, const std::string& path, const json& record) {
    auto held = lock(paths, id);
    if (!held) return fail(held.error());
    auto state = load(paths, id);
    if (!state) return fail(state.error());
    if (state->lifecycle == Lifecycle::destroying)
        return fail(make_error(Code::not_running, "sandbox \"" + id + "\" is being destroyed", id));
    return fs::atomic_write(path, record.dump() + "\n", 0600);
}

}  // namespace detached_files

namespace {

// Descriptor 3 of the supervisor: how it tells exec_detached() that it runs ("ok\n")
// or why it does not (an error's fields).
constexpr int kReadyFd = 3;

void report_ready(const std::string& line) {
    (void)!::write(kReadyFd, line.data(), line.size());
    ::close(kReadyFd);
}

// Copies the command's stdout and stderr (our pipes) into their rotating files until
// both have ended.
void copy_output(const Paths& paths, const std::string& id, int out_r, int err_r, RotatingFile& out,
                 RotatingFile& err) {
    struct pollfd pfds[2] = {{out_r, POLLIN, 0}, {err_r, POLLIN, 0}};
    RotatingFile* files[2] = {&out, &err};
    bool writing[2] = {true, true};
    auto may_add = [&] { return detached_files::may_add(paths, id); };
    char buf[65536];
    while (pfds[0].fd >= 0 || pfds[1].fd >= 0) {
        if (::poll(pfds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        for (int i = 0; i < 2; i++) {
            if (pfds[i].fd < 0 || !pfds[i].revents) continue;
            ssize_t n = ::read(pfds[i].fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n <= 0) {
                pfds[i].fd = -1;
                continue;
            }
            // A file that cannot be written any more (disk full, sandbox going): the
            // rest is read and dropped, so the command never blocks on its output.
            if (writing[i] && !files[i]->write(std::string_view(buf, size_t(n)), may_add)) writing[i] = false;
        }
    }
}

// The supervisor: runs the command as exec() does and keeps its output and result.
[[noreturn]] void supervise_detached(const Paths& paths, const std::string& id, const std::string& key,
                                     ExecOptions o) {
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);
    std::string dir = detached_files::dir(paths, id, key);
    auto refuse = [&](const Error& e) {
        report_ready(e.to_fields().dump() + "\n");
        ::_exit(1);
    };
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    int out[2], err[2];
    if (null_fd < 0) refuse(sys_error("open", "/dev/null"));
    if (::pipe2(out, O_CLOEXEC) < 0 || ::pipe2(err, O_CLOEXEC) < 0) refuse(sys_error("pipe2"));
    if (::dup2(null_fd, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) refuse(sys_error("dup2"));
    ::close(out[1]);
    ::close(err[1]);
    RotatingFile out_file(dir, "stdout", o.output_limit), err_file(dir, "stderr", o.output_limit);
    for (auto* f : {&out_file, &err_file})
        if (auto r = f->open(); !r) refuse(r.error());
    int self = int(::getpid());
    json record = {{"type", "exec"},   {"v", 1},   {"id", id},
                   {"exec", key},      {"argv", o.argv},
                   {"pid", self},      {"pid_start", proc::process_start(self)},
                   {"created", now_rfc3339()},
                   {"started_ns", std::chrono::system_clock::now().time_since_epoch().count()}};
    if (auto r = fs::atomic_write(dir + "/exec.json", record.dump() + "\n", 0600); !r) refuse(r.error());
    report_ready("ok\n");

    std::thread copier([&] { copy_output(paths, id, out[0], err[0], out_file, err_file); });
    auto result = exec(paths, id, o);
    // Our stdout and stderr were the only writers left on the pipes: the copier ends.
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    copier.join();
    json done;
    if (result) {
        done = result->to_record(id);
        for (auto* field : {"stdout", "stderr", "stdout_truncated", "stderr_truncated"}) done.erase(field);
    } else {
        done = std::move(result.error()).about(id).to_record();
    }
    done["exec"] = key;
    done["stdout_bytes"] = out_file.total();
    done["stderr_bytes"] = err_file.total();
    done["stdout_dropped"] = out_file.dropped();
    done["stderr_dropped"] = err_file.dropped();
    // A sandbox being destroyed takes the directory with it: nothing is added to it.
    (void)detached_files::write_if_kept(paths, id, dir + "/result.json", done);
    ::_exit(0);
}

}  // namespace

Result<json> exec_detached(const Paths& paths, const std::string& id, const ExecOptions& options) {
    if (auto r = check_id(id); !r) return fail(r.error());
    if (options.argv.empty()) return fail(make_error(Code::usage, "no command given (dsec-run exec -d ID -- CMD...)"));
    auto state = load(paths, id);
    if (!state) return fail(state.error());
    if (state->lifecycle != Lifecycle::running)
        return fail(make_error(Code::not_running, "sandbox \"" + id + "\" is " + std::string(lifecycle_name(state->lifecycle)), id));
    ExecOptions o = options;
    o.tty = false;
    o.capture = false;
    o.input = Stdin::null;
    std::string key = random_hex(4);
    std::string dir = detached_files::dir(paths, id, key);
    if (auto r = fs::mkdir_p(detached_dir(paths, id), 0700); !r) return fail(r.error());
    if (::mkdir(dir.c_str(), 0700) < 0) return fail(sys_error("mkdir", dir));
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) < 0) {
        (void)fs::remove_tree(dir);
        return fail(sys_error("pipe2"));
    }
    pid_t child = ::fork();
    if (child == 0) {
        // Twice forked, in a session of its own: nobody's child to reap, no terminal to
        // be signalled by, and only descriptors of its own (a caller reading our stdout
        // to its end does not wait for the command).
        ::setsid();
        if (::fork() != 0) ::_exit(0);
        if (ready[1] != kReadyFd && ::dup2(ready[1], kReadyFd) < 0) ::_exit(1);
        ::syscall(SYS_close_range, unsigned(kReadyFd + 1), ~0U, 0U);
        supervise_detached(paths, id, key, std::move(o));
    }
    ::close(ready[1]);
    Fd ready_r(ready[0]);
    if (child < 0) {
        (void)fs::remove_tree(dir);
        return fail(sys_error("fork"));
    }
    int status;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    std::string line;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(ready_r.get(), buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) line.append(buf, size_t(n));
    if (line != "ok\n") {
        (void)fs::remove_tree(dir);
        auto fields = json::parse(line, nullptr, false);
        if (fields.is_object()) return fail(Error::from_fields(fields));
        return fail(make_error(Code::exec, "the detached exec's supervisor did not start", dir));
    }
    auto record = detached_files::load(paths, id, key);
    if (!record) return fail(record.error());
    return detached_files::public_record(paths, id, *record);
}

}  // namespace dsec::sandbox
