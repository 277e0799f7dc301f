// Policies: parsing and its errors (each naming the field), the normalised record, the
// seccomp profile a policy makes of the default one (checked by loading it in a forked
// child) and its cached filter, the order of file rules, and how a policy's limits meet
// the command line's.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "dsec/guard/files.h"
#include "dsec/guard/policy.h"
#include "dsec/guard/policy_filter.h"
#include "dsec/guard/seccomp.h"
#include "dsec/ns/confine.h"
#include "dsec/ns/confinement.h"
#include "dsec/sandbox/policy.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using namespace dsec::guard;
using nlohmann::json;

namespace {

// The message of the error a policy text gives (empty: it parsed).
std::string error_of(const std::string& text) {
    auto p = parse_policy(text);
    if (p) return "";
    CHECK(p.error().code == Code::bad_input);
    return p.error().message;
}

// The errno a call gets in a child that loaded `bpf` (0: it worked).
int errno_under(const std::string& bpf, const std::function<long()>& call) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        auto c = ns::make_confinement(-1, -1, ~0ULL, ns::Rlimits{}, bpf);
        const char* op = "";
        if (!c || dsec_confine(c->get(), &op) != 0) ::_exit(251);
        errno = 0;
        ::_exit(call() < 0 ? errno : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) != 251);
    return WEXITSTATUS(status);
}

std::string compiled(const SyscallRules& rules) {
    auto text = seccomp_profile_with(default_seccomp_profile(), rules);
    REQUIRE(text);
    auto profile = parse_seccomp_profile(*text);
    REQUIRE(profile);
    auto bpf = compile_seccomp(*profile);
    REQUIRE(bpf);
    return *bpf;
}

}  // namespace

TEST_CASE("policy: an empty document is a policy that changes nothing") {
    auto p = parse_policy("{}");
    REQUIRE(p);
    CHECK(p->files.empty());
    CHECK(p->syscalls.empty());
    CHECK(p->network.empty());
    CHECK(p->digest.size() == 64);
}

TEST_CASE("policy: a full document parses and normalises") {
    auto p = parse_policy(R"({"about": "eval stage",
        "files": {"read_only": ["/", "/etc"], "read_write": ["/work", "/tmp"], "hidden": ["/answers", "/root/.ssh"]},
        "syscalls": {"allow": ["ptrace"], "deny": ["io_uring_setup", "clone"]},
        "network": {"allow": [{"cidr": "10.1.0.0/16", "ports": [443, "8000-8100"], "protocol": "tcp"},
                              {"cidr": "fd00::/8"}, {"domain": "mirror.example", "ports": [80]}]},
        "limits": {"memory": "512M", "cpus": 0.5, "pids": 64, "disk": 1048576, "nofile": 256},
        "scrub": ["/root/.cache"]})");
    REQUIRE(p);
    CHECK(p->files.hidden == std::vector<std::string>{"/answers", "/root/.ssh"});
    CHECK(p->limits.memory == 512u << 20);
    CHECK(p->limits.disk == 1048576);
    CHECK(p->limits.cpus == 0.5);
    REQUIRE(p->network.allow.size() == 3);
    json r = policy_record(*p);
    CHECK(r["network"]["egress"] == "deny");
    CHECK(r["network"]["allow"][0] == json({{"cidr", "10.1.0.0/16"}, {"ports", {443, "8000-8100"}}, {"protocol", "tcp"}}));
    CHECK(r["network"]["allow"][1] == json({{"cidr", "fd00::/8"}, {"ports", "all"}, {"protocol", "any"}}));
    CHECK(r["network"]["allow"][2]["domain"] == "mirror.example");
    CHECK(r["limits"]["pids"] == 64);
    CHECK(r["scrub"] == json({"/root/.cache"}));
}

TEST_CASE("policy: a bad document is an error naming the field") {
    CHECK(error_of("{") == "policy: top level: not valid JSON");
    CHECK(error_of("[]") == "policy: top level: not an object");
    CHECK(error_of(R"({"file": {}})") == "policy: top level: unknown key \"file\"");
    CHECK(error_of(R"({"files": {"hiden": []}})") == "policy: files: unknown key \"hiden\"");
    CHECK(error_of(R"({"files": {"hidden": "/a"}})") == "policy: files.hidden: must be an array of paths");
    CHECK(error_of(R"({"files": {"hidden": ["/a", "b"]}})") == "policy: files.hidden[1]: not an absolute path: \"b\"");
    CHECK(error_of(R"({"files": {"hidden": ["/a/../b"]}})").starts_with("policy: files.hidden[0]: \"/a/../b\" has"));
    CHECK(error_of(R"({"files": {"hidden": ["/a/"]}})") == "policy: files.hidden[0]: trailing slash in \"/a/\"");
    CHECK(error_of(R"({"files": {"hidden": ["/"]}})") == "policy: files.hidden[0]: \"/\" cannot be hidden");
    CHECK(error_of(R"({"files": {"hidden": ["/a", "/a"]}})") == "policy: files.hidden[1]: \"/a\" is listed twice");
    CHECK(error_of(R"({"files": {"hidden": ["/a"], "read_write": ["/a/b"]}})") ==
          "policy: files.hidden[0]: \"/a/b\" (read_only or read_write) lies in it");
    CHECK(error_of(R"({"files": {"read_only": ["/a"], "read_write": ["/a"]}})") ==
          "policy: files.read_write[0]: \"/a\" is read_only too");
    CHECK(error_of(R"({"files": {"read_write": ["/proc/sys"]}})") ==
          "policy: files.read_write[0]: \"/proc/sys\" lies in /proc, which stays as the baseline has it");
    CHECK(error_of(R"({"files": {"read_only": ["/proc/sys/net"], "hidden": ["/proc/kcore"]}})").empty());
    CHECK(error_of(R"({"syscalls": {"allow": ["nosuchcall"]}})") ==
          "policy: syscalls.allow[0]: unknown syscall \"nosuchcall\"");
    CHECK(error_of(R"({"syscalls": {"allow": ["mount"]}})").starts_with("policy: syscalls.allow[0]: \"mount\" can never"));
    CHECK(error_of(R"({"syscalls": {"allow": ["open_by_handle_at"]}})").starts_with("policy: syscalls.allow[0]:"));
    CHECK(error_of(R"({"syscalls": {"allow": ["ptrace"], "deny": ["ptrace"]}})") ==
          "policy: syscalls.allow[0]: \"ptrace\" is denied too");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.1/8"}]}})") ==
          "policy: network.allow[0].cidr: \"10.0.0.1/8\" has bits set past its prefix length");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.0/33"}]}})") ==
          "policy: network.allow[0].cidr: prefix length \"33\" is not 0-32");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "300.0.0.0/8"}]}})").starts_with("policy: network.allow[0].cidr:"));
    CHECK(error_of(R"({"network": {"allow": [{"domain": "a..b"}]}})") ==
          "policy: network.allow[0].domain: \"a..b\" is not a host name");
    CHECK(error_of(R"({"network": {"allow": [{"domain": "x", "cidr": "10.0.0.0/8"}]}})") ==
          "policy: network.allow[0]: needs one of \"cidr\" and \"domain\"");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.0/8", "ports": [0]}]}})") ==
          "policy: network.allow[0].ports[0]: not a port 1-65535 or a range FIRST-LAST");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.0/8", "ports": ["90-80"]}]}})") ==
          "policy: network.allow[0].ports[0]: not a port 1-65535 or a range FIRST-LAST");
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.0/8", "ports": [70000]}]}})").starts_with(
        "policy: network.allow[0].ports[0]:"));
    CHECK(error_of(R"({"network": {"allow": [{"cidr": "10.0.0.0/8", "protocol": "icmp"}]}})") ==
          "policy: network.allow[0].protocol: must be \"tcp\", \"udp\" or \"any\"");
    CHECK(error_of(R"({"limits": {"memory": "lots"}})").starts_with("policy: limits.memory: "));
    CHECK(error_of(R"({"limits": {"pids": 0}})") == "policy: limits.pids: must be a whole number above zero");
    CHECK(error_of(R"({"limits": {"cpus": -1}})").starts_with("policy: limits.cpus: "));
    CHECK(error_of(R"({"limits": {"pids": 1}})") == "policy: limits.pids: must be at least 2 (the init and one more)");
    CHECK(error_of(R"({"limits": {"swap": 1}})") == "policy: limits: unknown key \"swap\"");
    CHECK(error_of(R"({"scrub": ["relative"]})") == "policy: scrub[0]: not an absolute path: \"relative\"");
}

TEST_CASE("policy: every example in the repository parses") {
    for (auto name : {"eval.json", "install.json", "debugger.json"}) {
        auto p = load_policy(std::string(DSEC_SRC_DIR) + "/examples/policies/" + name);
        CHECK_MESSAGE(p, name);
    }
}

TEST_CASE("policy: the should-fail policies in tests/data fail") {
    auto dir = std::string(DSEC_SRC_DIR) + "/tests/data/policies";
    for (auto name : {"bad-json.json", "bad-hidden-relative.json", "bad-allow-mount.json", "bad-cidr.json",
                      "bad-unknown-key.json", "bad-limits.json"})
        CHECK_MESSAGE(!load_policy(dir + "/" + name), name);
}

TEST_CASE("policy: syscall changes over the default profile") {
    SUBCASE("the profile text") {
        auto text = seccomp_profile_with(default_seccomp_profile(), {{"ptrace", "io_uring_setup"}, {"chroot"}});
        REQUIRE(text);
        json j = json::parse(*text);
        bool ptrace_left = false, process_vm_left = false;
        for (auto& r : j["rules"])
            for (auto& s : r["syscalls"]) {
                ptrace_left = ptrace_left || s == "ptrace";
                process_vm_left = process_vm_left || s == "process_vm_readv";
            }
        CHECK(!ptrace_left);
        CHECK(process_vm_left);  // the rest of ptrace's rule stays
        CHECK(j["rules"].back()["syscalls"] == json({"chroot"}));
        CHECK(!seccomp_profile_with(default_seccomp_profile(), {{"mount"}, {}}));
        CHECK(!seccomp_profile_with("[]", {{"ptrace"}, {}}));
    }
    SUBCASE("loaded: an allowed call works, a denied one is refused, the rest of the default holds") {
        std::string bpf = compiled({{"personality"}, {"getcwd"}});
        char buf[64];
        CHECK(errno_under(bpf, [&] { return ::syscall(SYS_getcwd, buf, sizeof buf); }) == EPERM);
        // ADDR_NO_RANDOMIZE is refused by the default and allowed by this policy.
        CHECK(errno_under(bpf, [] { return ::syscall(SYS_personality, 0x0040000UL); }) == 0);
        CHECK(errno_under(compiled({}), [] { return ::syscall(SYS_personality, 0x0040000UL); }) == EPERM);
        CHECK(errno_under(bpf, [] { return ::syscall(SYS_keyctl, 0, 0, 0, 0, 0); }) == EPERM);
        CHECK(errno_under(bpf, [] { return ::syscall(SYS_getpid); }) == 0);
    }
    SUBCASE("denying a call the default refuses only under a condition refuses it always") {
        std::string bpf = compiled({{}, {"socket"}});
        CHECK(errno_under(bpf, [] { return ::syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0); }) == EPERM);
        CHECK(errno_under(compiled({}), [] { return ::syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0); }) == 0);
    }
}

TEST_CASE("policy: file rules are applied outer path first, hidden paths last") {
    FileRules r{{"/work/ro", "/"}, {"/work"}, {"/answers"}};
    auto plan = file_plan(r);
    REQUIRE(plan.size() == 4);
    CHECK(plan[0] == std::pair{FileStep::read_only, std::string("/")});
    CHECK(plan[1] == std::pair{FileStep::read_write, std::string("/work")});
    CHECK(plan[2] == std::pair{FileStep::read_only, std::string("/work/ro")});
    CHECK(plan[3] == std::pair{FileStep::hide, std::string("/answers")});
    CHECK(file_step_name(FileStep::hide) == "hidden");
}

TEST_CASE("policy: limits only ever get tighter") {
    sandbox::CreateOptions o;
    o.limits.memory = 1u << 30;
    o.limits.pids = 4096;
    o.security.rlimits.nofile_soft = 1024;
    o.security.rlimits.nofile_hard = 524288;
    guard::PolicyLimits l;
    l.memory = 2u << 30;  // looser: ignored
    l.pids = 64;
    l.disk = 1u << 20;    // unset before: taken
    l.nofile = 4096;      // above the soft limit, below the hard one
    sandbox::tighten_limits(l, o);
    CHECK(o.limits.memory == 1u << 30);
    CHECK(o.limits.pids == 64);
    CHECK(o.disk == 1u << 20);
    CHECK(o.limits.cpus == 0);
    CHECK(o.security.rlimits.nofile_soft == 1024);
    CHECK(o.security.rlimits.nofile_hard == 4096);
}

TEST_CASE("policy: create takes a policy whole or refuses it") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-policy.");
    REQUIRE(tmp);
    const std::string& dir = tmp->path();
    auto write = [&](const std::string& name, const std::string& text) {
        REQUIRE(fs::atomic_write(dir + "/" + name, text));
        return dir + "/" + name;
    };
    SUBCASE("files, syscalls and limits are taken") {
        sandbox::CreateOptions o;
        o.limits.pids = 4096;
        REQUIRE(sandbox::use_policy(write("ok.json", R"({"files": {"hidden": ["/a"]}, "limits": {"pids": 9}})"), o));
        REQUIRE(o.guard);
        CHECK(o.guard->files.hidden == std::vector<std::string>{"/a"});
        CHECK(o.limits.pids == 9);
        CHECK(o.policy == dir + "/ok.json");
    }
    SUBCASE("address and domain rules are taken (names are resolved when the rules are put in force)") {
        sandbox::CreateOptions o;
        REQUIRE(sandbox::use_policy(write("net.json", R"({"network": {"allow": [{"cidr": "10.0.0.0/8"}]}})"), o));
        REQUIRE(o.guard);
        CHECK(o.guard->network.allow.size() == 1);
        sandbox::CreateOptions d;
        REQUIRE(sandbox::use_policy(write("dns.json", R"({"network": {"allow": [{"domain": "mirror.example"}]}})"), d));
        REQUIRE(d.guard);
        CHECK(d.guard->network.allow.front().domain == "mirror.example");
    }
    SUBCASE("syscall changes need a profile to change") {
        sandbox::CreateOptions o;
        o.security.seccomp = "unconfined";
        CHECK(!sandbox::use_policy(write("sys.json", R"({"syscalls": {"deny": ["chroot"]}})"), o));
    }
    SUBCASE("a bad policy names the file and the field") {
        sandbox::CreateOptions o;
        auto r = sandbox::use_policy(write("bad.json", R"({"limits": {"pids": -1}})"), o);
        REQUIRE(!r);
        CHECK(r.error().path == dir + "/bad.json");
        CHECK(r.error().message.starts_with("policy: limits.pids"));
    }
}

TEST_CASE("policy filter: cached by base and rules, the bytes of the changed profile") {
    auto run = fs::TempDir::make("/tmp", "dsec-unit-policy-filter.");
    REQUIRE(run);
    SyscallRules deny_uring{{}, {"io_uring_setup", "io_uring_enter", "io_uring_register"}};
    auto first = cached_policy_filter(run->path(), default_seccomp_profile(), deny_uring);
    REQUIRE(first);
    CHECK(*read_seccomp_filter(*first) == compiled(deny_uring));
    struct stat before, after;
    REQUIRE(::stat(first->c_str(), &before) == 0);

    auto again = cached_policy_filter(run->path(), default_seccomp_profile(), deny_uring);
    REQUIRE(again);
    CHECK(*again == *first);
    REQUIRE(::stat(again->c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);  // found, not written again

    // Other rules, the same names moved from deny to allow, and the plain default
    // profile: each its own filter.
    SyscallRules allow_ptrace{{"ptrace"}, {}};
    auto other = cached_policy_filter(run->path(), default_seccomp_profile(), allow_ptrace);
    REQUIRE(other);
    CHECK(*other != *first);
    CHECK(*read_seccomp_filter(*other) == compiled(allow_ptrace));
    SyscallRules moved{{"io_uring_setup", "io_uring_enter", "io_uring_register"}, {}};
    auto swapped = cached_policy_filter(run->path(), default_seccomp_profile(), moved);
    REQUIRE(swapped);
    CHECK(*swapped != *first);
    auto plain = cached_seccomp_filter(run->path(), default_seccomp_profile());
    REQUIRE(plain);
    CHECK(*plain != *first);
    CHECK(fs::list_dir(run->path() + "/seccomp")->size() == 4);

    // A call no policy may allow is refused, and nothing is cached for it.
    auto refused = cached_policy_filter(run->path(), default_seccomp_profile(), {{"mount"}, {}});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == Code::bad_input);
    CHECK(fs::list_dir(run->path() + "/seccomp")->size() == 4);
}

TEST_CASE("policy filter: the profile is made only when nothing is cached under its key") {
    auto run = fs::TempDir::make("/tmp", "dsec-unit-policy-filter.");
    REQUIRE(run);
    int made = 0;
    auto make = [&]() -> Result<std::string> {
        made++;
        return std::string(default_seccomp_profile());
    };
    auto first = cached_seccomp_filter(run->path(), "a key that is no profile", make);
    REQUIRE(first);
    auto second = cached_seccomp_filter(run->path(), "a key that is no profile", make);
    REQUIRE(second);
    CHECK(*second == *first);
    CHECK(made == 1);
    auto failing = cached_seccomp_filter(run->path(), "another key", [] () -> Result<std::string> {
        return fail(make_error(Code::bad_input, "no profile"));
    });
    REQUIRE_FALSE(failing);
    CHECK(failing.error().message == "no profile");
}
