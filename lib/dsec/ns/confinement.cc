#include "dsec/ns/confinement.h"

#include <linux/capability.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace dsec::ns {

namespace {
// Index = capability number (linux/capability.h).
constexpr std::string_view kCapNames[] = {
    "CHOWN",          "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER",          "FSETID",         "KILL",
    "SETGID",         "SETUID",       "SETPCAP",         "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
    "NET_ADMIN",      "NET_RAW",      "IPC_LOCK",        "IPC_OWNER",       "SYS_MODULE",     "SYS_RAWIO",
    "SYS_CHROOT",     "SYS_PTRACE",   "SYS_PACCT",       "SYS_ADMIN",       "SYS_BOOT",       "SYS_NICE",
    "SYS_RESOURCE",   "SYS_TIME",     "SYS_TTY_CONFIG",  "MKNOD",           "LEASE",          "AUDIT_WRITE",
    "AUDIT_CONTROL",  "SETFCAP",      "MAC_OVERRIDE",    "MAC_ADMIN",       "SYSLOG",         "WAKE_ALARM",
    "BLOCK_SUSPEND",  "AUDIT_READ",   "PERFMON",         "BPF",             "CHECKPOINT_RESTORE"};
constexpr size_t kCaps = sizeof kCapNames / sizeof *kCapNames;
constexpr uint64_t kAllCaps = (uint64_t(1) << kCaps) - 1;

Result<uint64_t> parse_cap(std::string name) {
    for (auto& ch : name) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    if (name.rfind("CAP_", 0) == 0) name.erase(0, 4);
    if (name == "ALL") return kAllCaps;
    for (size_t i = 0; i < kCaps; i++)
        if (kCapNames[i] == name) return uint64_t(1) << i;
    return fail(make_error(Code::usage, "unknown capability \"" + name + "\" (see capabilities(7))"));
}
}  // namespace

uint64_t default_caps() {
    uint64_t caps = 0;
    for (int cap : {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_NET_BIND_SERVICE, CAP_SETFCAP,
                    CAP_SETGID, CAP_SETPCAP, CAP_SETUID, CAP_SYS_CHROOT})
        caps |= uint64_t(1) << cap;
    return caps;
}

Result<uint64_t> change_caps(uint64_t base, const std::vector<std::string>& add, const std::vector<std::string>& drop) {
    for (auto& n : add) {
        auto c = parse_cap(n);
        if (!c) return fail(c.error());
        base |= *c;
    }
    for (auto& n : drop) {
        auto c = parse_cap(n);
        if (!c) return fail(c.error());
        base &= ~*c;
    }
    return base;
}

std::vector<std::string> cap_names(uint64_t caps) {
    std::vector<std::string> out;
    for (size_t i = 0; i < kCaps; i++)
        if (caps & (uint64_t(1) << i)) out.emplace_back(kCapNames[i]);
    return out;
}

Result<uint64_t> caps_from_names(const std::vector<std::string>& names) {
    auto caps = change_caps(0, names, {});
    if (!caps) return fail(make_error(Code::bad_input, caps.error().detail()));
    return caps;
}

Result<std::unique_ptr<dsec_confinement>> make_confinement(int64_t uid, int64_t gid, uint64_t caps,
                                                          const Rlimits& limits, std::string_view seccomp) {
    if (seccomp.size() > DSEC_MAX_SECCOMP_BYTES)
        return fail(make_error(Code::bad_input, "the seccomp program is larger than the kernel takes"));
    auto c = std::make_unique<dsec_confinement>();
    std::memset(c.get(), 0, sizeof *c);
    c->magic = DSEC_CONFINEMENT_MAGIC;
    c->size = sizeof *c;
    c->uid = uid;
    c->gid = gid;
    c->caps = caps;
    c->memory_merge = 1;
    auto add = [&](int resource, uint64_t soft, uint64_t hard) {
        c->rlimits[c->n_rlimits].resource = resource;
        c->rlimits[c->n_rlimits].limit = {rlim_t(soft), rlim_t(hard)};
        c->n_rlimits++;
    };
    add(RLIMIT_CORE, limits.core, limits.core);
    add(RLIMIT_NOFILE, limits.nofile_soft, limits.nofile_hard);
    add(RLIMIT_FSIZE, limits.fsize, limits.fsize);
    c->seccomp_bytes = uint32_t(seccomp.size());
    std::memcpy(c->seccomp, seccomp.data(), seccomp.size());
    return c;
}

Result<int> read_report(int fd, const std::string& what) {
    dsec_report r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = ::read(fd, reinterpret_cast<char*>(&r) + got, sizeof r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += size_t(n);
    }
    if (got != sizeof r) return fail(make_error(Code::io, what + " exited before it reported"));
    r.op[sizeof r.op - 1] = 0;
    r.path[sizeof r.path - 1] = 0;
    if (r.err == 0) return r.value;
    return fail(errno_error(r.err, r.op, r.path).context(std::string(what)));
}

}  // namespace dsec::ns
