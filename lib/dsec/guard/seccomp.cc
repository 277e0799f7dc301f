// Compiling a profile with libseccomp, and the cache of compiled filters that lets every
// create and exec load plain BPF without paying for libseccomp again.
#include "dsec/guard/seccomp.h"

#include <linux/filter.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/sha256.h"

namespace dsec::guard {

namespace {

// Bump when the way a profile becomes BPF changes (not_in_cover, attributes), so that
// filters cached by an older dsec are not taken for current ones.
constexpr std::string_view kCompilerRevision = "dsec-seccomp-1";

using Ctx = std::unique_ptr<void, decltype(&seccomp_release)>;

uint32_t scmp_action(Action action, int err) {
    switch (action) {
        case Action::allow: return SCMP_ACT_ALLOW;
        case Action::errno_return: return SCMP_ACT_ERRNO(uint32_t(err));
        case Action::kill_process: return SCMP_ACT_KILL_PROCESS;
        case Action::kill_thread: return SCMP_ACT_KILL_THREAD;
        case Action::trap: return SCMP_ACT_TRAP;
        case Action::log: return SCMP_ACT_LOG;
    }
    return SCMP_ACT_KILL_PROCESS;
}

scmp_compare scmp_op(ArgOp op) {
    switch (op) {
        case ArgOp::eq: return SCMP_CMP_EQ;
        case ArgOp::ne: return SCMP_CMP_NE;
        case ArgOp::lt: return SCMP_CMP_LT;
        case ArgOp::le: return SCMP_CMP_LE;
        case ArgOp::gt: return SCMP_CMP_GT;
        case ArgOp::ge: return SCMP_CMP_GE;
        case ArgOp::masked_eq:
        case ArgOp::not_in: return SCMP_CMP_MASKED_EQ;
    }
    return SCMP_CMP_EQ;
}

Error scmp_error(int rc, const std::string& op, const std::string& what) {
    Error e = errno_error(-rc, op);
    e.code = Code::seccomp;
    e.message = what;
    return e;
}

// The argument lists one rule becomes: one list, or one per cube of its not_in condition.
std::vector<std::vector<scmp_arg_cmp>> comparisons(const Rule& rule) {
    std::vector<scmp_arg_cmp> plain;
    const ArgMatch* not_in = nullptr;
    for (const auto& a : rule.args) {
        if (a.op == ArgOp::not_in) {
            not_in = &a;
            continue;
        }
        uint64_t first = a.op == ArgOp::masked_eq ? a.mask : a.value;
        uint64_t second = a.op == ArgOp::masked_eq ? a.value : 0;
        plain.push_back(scmp_arg_cmp{a.index, scmp_op(a.op), first, second});
    }
    if (!not_in) return {plain};
    std::vector<std::vector<scmp_arg_cmp>> lists;
    for (auto [mask, value] : not_in_cover(not_in->mask, not_in->values)) {
        lists.push_back(plain);
        lists.back().push_back(scmp_arg_cmp{not_in->index, SCMP_CMP_MASKED_EQ, mask, value});
    }
    return lists;
}

Status add_rule(scmp_filter_ctx ctx, const Rule& rule, size_t index) {
    uint32_t action = scmp_action(rule.action, rule.err);
    auto lists = comparisons(rule);
    for (size_t s = 0; s < rule.syscalls.size(); s++) {
        // A Profile made in code rather than parsed may carry names only.
        int nr = s < rule.numbers.size() ? rule.numbers[s] : seccomp_syscall_resolve_name(rule.syscalls[s].c_str());
        if (nr == __NR_SCMP_ERROR)
            return fail(make_error(Code::bad_input, "rule " + std::to_string(index) + ": unknown syscall \"" +
                                                    rule.syscalls[s] + "\""));
        for (const auto& cmps : lists) {
            int rc = seccomp_rule_add_array(ctx, action, nr, unsigned(cmps.size()), cmps.data());
            if (rc < 0)
                return fail(scmp_error(rc, "seccomp_rule_add",
                                       "rule " + std::to_string(index) + " (" + rule.syscalls[s] + ")"));
        }
    }
    return {};
}

// seccomp_export_bpf writes to a descriptor (libseccomp 2.5 has no in-memory export).
Result<std::string> export_bpf(scmp_filter_ctx ctx) {
    Fd mem(::memfd_create("dsec-seccomp", MFD_CLOEXEC));
    if (!mem) return fail(sys_error("memfd_create"));
    if (int rc = seccomp_export_bpf(ctx, mem.get()); rc < 0) return fail(scmp_error(rc, "seccomp_export_bpf", {}));
    struct stat st;
    if (::fstat(mem.get(), &st) < 0) return fail(sys_error("fstat", "memfd"));
    std::string bpf(size_t(st.st_size), '\0');
    size_t done = 0;
    while (done < bpf.size()) {
        ssize_t n = ::pread(mem.get(), bpf.data() + done, bpf.size() - done, off_t(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(n < 0 ? sys_error("pread", "memfd") : make_error(Code::io, "short read of the exported filter"));
        done += size_t(n);
    }
    return bpf;
}

std::string filter_digest(std::string_view key) {
    const scmp_version* v = seccomp_version();
    Sha256 h;
    h.update(kCompilerRevision);
    std::string where = "\narch " + std::to_string(seccomp_arch_native()) + "\nlibseccomp " +
                        std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                        std::to_string(v->micro) + "\n";
    h.update(where);
    h.update(key);
    return h.hex();
}

}  // namespace

Result<std::string> compile_seccomp(const Profile& profile) {
    Ctx ctx(seccomp_init(scmp_action(profile.default_action, 0)), seccomp_release);
    if (!ctx) return fail(make_error(Code::seccomp, "seccomp_init failed"));
    // The loader sets no_new_privs itself, before it loads the program.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc < 0)
        return fail(scmp_error(rc, "seccomp_attr_set", "SCMP_FLTATR_CTL_NNP"));
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, scmp_action(profile.bad_arch, 0)); rc < 0)
        return fail(scmp_error(rc, "seccomp_attr_set", "SCMP_FLTATR_ACT_BADARCH"));
    // A binary tree of syscall numbers: a call no rule names passes in a handful of
    // jumps instead of one comparison per named call.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0)
        return fail(scmp_error(rc, "seccomp_attr_set", "SCMP_FLTATR_CTL_OPTIMIZE"));
    for (size_t i = 0; i < profile.rules.size(); i++)
        if (auto r = add_rule(ctx.get(), profile.rules[i], i); !r) return fail(r.error());
    return export_bpf(ctx.get());
}

Result<std::string> cached_seccomp_filter(const std::string& run_dir, std::string_view profile_json) {
    return cached_seccomp_filter(run_dir, profile_json,
                                 [&]() -> Result<std::string> { return std::string(profile_json); });
}

Result<std::string> cached_seccomp_filter(const std::string& run_dir, std::string_view key,
                                          const std::function<Result<std::string>()>& make_profile) {
    std::string dir = run_dir + "/seccomp";
    std::string path = dir + "/" + filter_digest(key) + ".bpf";
    if (fs::exists(path)) return path;
    auto profile_json = make_profile();
    if (!profile_json) return fail(profile_json.error());
    auto profile = parse_seccomp_profile(*profile_json);
    if (!profile) return fail(profile.error());
    auto bpf = compile_seccomp(*profile);
    if (!bpf) return fail(bpf.error());
    if (auto m = fs::mkdir_p(dir, 0700); !m) return fail(m.error());
    // Racing writers produce the same bytes, and the file is never replaced: a rename
    // over it would leave the inode a sandbox is linking (install_seccomp) without a
    // name, and link(2) fails with ENOENT on such an inode (one create in 15 of a
    // `create -P 2` into a fresh run directory did).
    if (auto w = fs::write_once(path, *bpf, 0644); !w) return fail(w.error());
    return path;
}

Result<std::string> read_seccomp_filter(const std::string& path) {
    auto bpf = fs::read_file(path);
    if (!bpf) return fail(bpf.error());
    size_t n = bpf->size();
    if (n == 0 || n % sizeof(sock_filter) != 0 || n / sizeof(sock_filter) > BPF_MAXINSNS)
        return fail(make_error(Code::corrupt,
                               "a seccomp filter of " + std::to_string(n) + " bytes: not 1 to " +
                                   std::to_string(BPF_MAXINSNS) + " instructions of " +
                                   std::to_string(sizeof(sock_filter)) + " bytes",
                               path));
    return bpf;
}

}  // namespace dsec::guard
