#include "dsec/sandbox/create_args.h"

#include <sys/resource.h>

#include <cstdlib>

#include "dsec/ns/confinement.h"
#include "dsec/sandbox/bind.h"
#include "dsec/sandbox/policy.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/parse.h"

namespace dsec::sandbox {

namespace {
// --ulimit nofile=1024:4096, core=0, fsize=1G (sizes take units).
Status apply_ulimit(const std::string& text, ns::Rlimits& r) {
    auto eq = text.find('=');
    std::string name = text.substr(0, eq);
    if (eq == std::string::npos) return fail(make_error(Code::usage, "--ulimit \"" + text + "\" is not NAME=SOFT[:HARD]"));
    std::string value = text.substr(eq + 1);
    auto colon = value.find(':');
    auto parse = [&](const std::string& v) -> Result<uint64_t> {
        if (v == "unlimited") return uint64_t(RLIM_INFINITY);
        return name == "nofile" ? parse_count(v, "--ulimit nofile") : parse_size(v);
    };
    auto soft = name == "core" && value.substr(0, colon) == "0" ? Result<uint64_t>(0) : parse(value.substr(0, colon));
    if (!soft) return fail(soft.error());
    auto hard = colon == std::string::npos ? soft : parse(value.substr(colon + 1));
    if (!hard) return fail(hard.error());
    if (*soft > *hard) return fail(make_error(Code::usage, "--ulimit " + text + ": soft limit above hard limit"));
    if (name == "nofile") {
        r.nofile_soft = *soft;
        r.nofile_hard = *hard;
    } else if (name == "core" && *soft == *hard) {
        r.core = *soft;
    } else if (name == "fsize" && *soft == *hard) {
        r.fsize = *soft;
    } else {
        return fail(make_error(Code::usage, "--ulimit takes nofile=SOFT[:HARD], core=N or fsize=SIZE, got \"" + text + "\""));
    }
    return {};
}
}  // namespace

Result<CreateOptions> CreateArgs::to_options() const {
    CreateOptions o;
    o.id = id;
    o.hostname = hostname;
    if (!id.empty())
        if (auto r = check_id(id); !r) return fail(make_error(Code::usage, r.error().detail()));
    if (hostname.size() > 63) return fail(make_error(Code::usage, "--hostname is longer than 63 characters"));
    auto size = [](const std::string& s, uint64_t& out) -> Status {
        if (s.empty()) return {};
        auto v = parse_size(s);
        if (!v) return fail(v.error());
        out = *v;
        return {};
    };
    if (auto r = size(memory, o.limits.memory); !r) return fail(r.error());
    auto shared = cgroup::parse_memcg(memcg);
    if (!shared) return fail(shared.error());
    o.memcg = *shared;
    if (o.memcg == cgroup::Memcg::shared && o.limits.memory)
        return fail(make_error(Code::usage, "--memory needs the sandbox's own memory cgroup: not with --memcg shared"));
    if (auto r = size(disk, o.disk); !r) return fail(r.error());
    if (!cpus.empty()) {
        auto c = parse_cpus(cpus);
        if (!c) return fail(c.error());
        o.limits.cpus = *c;
    }
    o.limits.pids = kDefaultPids;
    if (pids == "max") {
        o.limits.pids = 0;
    } else if (!pids.empty()) {
        auto p = parse_count(pids, "--pids");
        if (!p) return fail(p.error());
        if (*p < guard::kMinPids)
            return fail(make_error(Code::usage, "--pids " + pids + ": at least " + std::to_string(guard::kMinPids) +
                                                    " (the init and one more)"));
        o.limits.pids = *p;
    }
    if (auto r = size(tmp_size, o.tmp_size); !r) return fail(r.error());
    o.security.userns = userns != "host";
    auto caps = ns::change_caps(ns::default_caps(), cap_add, cap_drop);
    if (!caps) return fail(caps.error());
    o.security.caps = *caps;
    for (auto& u : ulimits)
        if (auto r = apply_ulimit(u, o.security.rlimits); !r) return fail(r.error());
    if (seccomp != "default" && seccomp != "unconfined") {
        if (!fs::exists(seccomp)) return fail(make_error(Code::usage, "--seccomp profile not found", seccomp));
        char* abs = ::realpath(seccomp.c_str(), nullptr);
        o.security.seccomp = abs ? abs : seccomp;
        std::free(abs);
    } else {
        o.security.seccomp = seccomp;
    }
    auto cls = parse_cpu_class(cpu_class);
    if (!cls) return fail(cls.error());
    o.cpu_class = *cls;
    for (auto [text, out] : {std::pair{&ttl, &o.ttl_ms}, std::pair{&idle_ttl, &o.idle_ttl_ms}}) {
        if (text->empty()) continue;
        auto d = parse_duration_ms(*text);
        if (!d) return fail(d.error());
        *out = *d;
    }
    if (auto r = check_env(env, "--env"); !r) return fail(r.error());
    o.env = env;
    if (!user.empty())
        if (auto u = parse::check_user(user); !u) return fail(u.error());
    o.user = user;
    if (!workdir.empty() && workdir[0] != '/') return fail(make_error(Code::usage, "--workdir must be an absolute path"));
    o.workdir = workdir;
    o.network = network;
    if (!binds.empty() && userns == "host")
        return fail(make_error(Code::usage, "--bind needs the sandbox's own user namespace: not with --userns host"));
    for (auto& text : binds) {
        auto b = parse_bind(text);
        if (!b) return fail(b.error());
        o.binds.push_back(*b);
    }
    auto parsed = parse::parse_labels(labels);
    if (!parsed) return fail(parsed.error());
    o.labels = std::move(*parsed);
    if (!policy.empty()) {
        if (!fs::exists(policy)) return fail(make_error(Code::usage, "--policy file not found", policy));
        if (auto r = use_policy(policy, o); !r) return fail(r.error());
    }
    auto init = find_init();
    if (!init) return fail(init.error());
    o.init_program = *init;
    return o;
}

}  // namespace dsec::sandbox
