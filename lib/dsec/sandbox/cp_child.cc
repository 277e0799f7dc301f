#include "dsec/sandbox/cp_child.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <vector>

#include "dsec/cgroup/cgroup.h"
#include "dsec/ns/join.h"
#include "dsec/sandbox/activity.h"
#include "dsec/sandbox/cpu_class.h"
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/open.h"
#include "dsec/sandbox/security.h"
#include "dsec/sys/fs.h"

namespace dsec::sandbox {

namespace {
constexpr char kComplete = 'k';
constexpr size_t kMaxReport = size_t(1) << 20;
constexpr int kGraceMs = 10'000;

// The child's one way of reporting: a JSON object on the report pipe, then exit.
[[noreturn]] void report_and_exit(int fd, const Result<copy::Stats>& r) {
    nlohmann::json rec = {{"ok", bool(r)}};
    if (r) r->annotate(rec);
    else rec["error"] = r.error().to_fields();
    (void)fs::write_all(fd, rec.dump());
    ::_exit(r ? 0 : 1);
}

[[noreturn]] void child_main(const InsideWork& inside, const dsec_confinement* confinement, int data_fd, int report_fd,
                             int verdict_fd) {
    // spawn_inside left it nothing but these pipes, not dumpable; it copies as root of
    // the sandbox, held like any command of it.
    const char* op = "";
    if (dsec_confine(confinement, &op) < 0) report_and_exit(report_fd, fail(sys_error(op, "confining the copy")));
    // The sandbox's root, opened once: every path inside is resolved from it.
    Fd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) report_and_exit(report_fd, fail(sys_error("open", "/ inside the sandbox")));
    auto r = inside(root.get(), data_fd, verdict_fd);
    ::close(data_fd);
    report_and_exit(report_fd, r);
}

// Everything on the report pipe, up to kMaxReport (a hostile child may send more). With
// `grace_ms` set, a child that has not finished by then is killed (EOF follows).
std::string slurp(int fd, const ns::Joined& child, int grace_ms) {
    std::string text;
    char buf[65536];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (grace_ms >= 0 && ::poll(&p, 1, grace_ms) == 0) {
            ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
            grace_ms = -1;
        }
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (text.size() < kMaxReport) text.append(buf, size_t(n));
    }
    return text;
}

// What the child said: its stats or its error (`reported`), else an error that says
// how it ended.
struct Report {
    Result<copy::Stats> outcome;
    bool reported = false;
};

Report parse_report(const std::string& text, int status, const std::string& id) {
    auto rec = nlohmann::json::parse(text, nullptr, false);
    if (rec.is_discarded() || !rec.is_object() || !rec.value("ok", nlohmann::json()).is_boolean()) {
        std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
        return {fail(make_error(Code::copy_failed, "the copy's child inside the sandbox " + how + " without a report", id)),
                false};
    }
    if (!rec["ok"].get<bool>()) return {fail(Error::from_fields(rec.value("error", nlohmann::json()))), true};
    return {copy::Stats::from_record(rec), true};
}

bool peer_went_away(const Error& e) { return e.err == EPIPE; }

// Out of a sandbox the host's reader stops at the archive's end blocks, while the rest of
// the child's last write (one 10 KiB record: the end blocks and their padding, split by
// the pipe) may still be on its way; closing then would fail the child with EPIPE. So
// what is left is read and dropped until the child closes its end, for at most a second
// and 1 MiB (the child is ours, but it runs inside).
void drain(int fd) {
    char buf[16384];
    size_t total = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (total < (size_t(1) << 20)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return;
        struct pollfd p = {fd, POLLIN, 0};
        int ready = ::poll(&p, 1, int(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return;
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        total += size_t(n);
    }
}
}  // namespace

bool host_completed(int verdict_fd) {
    char c = 0;
    ssize_t n;
    do n = ::read(verdict_fd, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 && c == kComplete;
}

Result<copy::Stats> run_copy(const Paths& paths, const std::string& id, Flow flow, const InsideWork& inside,
                             const HostWork& host) {
    auto opened = open_sandbox(paths, id, Need::any);
    if (!opened) return fail(opened.error());
    const json& fields = opened->state.extra;
    auto in_use = begin_use(paths, id);
    if (!in_use) return fail(in_use.error());
    auto security = security_from_state(fields);
    if (!security) return fail(security.error());
    auto confinement = confinement_for(paths, id, *security, 0, 0);
    if (!confinement) return fail(confinement.error());
    apply_cpu_class(cpu_class_of(fields), **confinement);
    ns::JoinSpec spec = opened->join(CLONE_NEWNS, security->userns);

    bool in = flow == Flow::into_sandbox;
    int data[2], rep[2], verdict[2] = {-1, -1};
    if (::pipe2(data, O_CLOEXEC) < 0 || ::pipe2(rep, O_CLOEXEC) < 0 || (in && ::pipe2(verdict, O_CLOEXEC) < 0))
        return fail(sys_error("pipe2"));
    Fd data_r(data[0]), data_w(data[1]), rep_r(rep[0]), rep_w(rep[1]), verdict_r(verdict[0]), verdict_w(verdict[1]);
    Fd& child_data = in ? data_r : data_w;
    Fd& host_data = in ? data_w : data_r;
    spec.keep_fds = {child_data.get(), rep_w.get(), verdict_r.get()};
    auto child = ns::spawn_inside(
        spec, [&] { child_main(inside, confinement->get(), child_data.get(), rep_w.get(), verdict_r.get()); });
    if (!child) return fail(child.error());
    child_data.reset();
    rep_w.reset();
    verdict_r.reset();

    Status mine = host(host_data.get());
    if (!in && mine) drain(host_data.get());
    // Closed: a child still writing gets EPIPE, one still reading gets EOF.
    host_data.reset();
    if (in && mine) (void)!::write(verdict_w.get(), &kComplete, 1);
    verdict_w.reset();
    // Read before waiting: a long report fills the pipe. After a failure here the child
    // has a moment to say why, then goes.
    std::string text = slurp(rep_r.get(), *child, mine ? -1 : kGraceMs);
    int status = 0;
    while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    auto theirs = parse_report(text, status, id);
    // The producer's failure is the cause; the consumer only sees a stream cut short.
    // Into a sandbox the host produces, unless what it saw was the child stop reading.
    // Out of one the child produces: an error it reported comes first.
    bool mine_first = in ? !mine && !peer_went_away(mine.error()) : !mine && !(theirs.reported && !theirs.outcome);
    if (mine_first) return fail(mine.error());
    if (!theirs.outcome) return fail(theirs.outcome.error());
    if (!mine) return fail(mine.error());
    return theirs.outcome;
}

}  // namespace dsec::sandbox
