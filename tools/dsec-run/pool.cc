// dsec-run pool (fill, ls, drain), and run --pool: one-shot sandboxes drawn from
// sandboxes created ahead (sandbox/pool.h).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsec/layer/store.h"
#include "dsec/sandbox/disk.h"
#include "dsec/sandbox/pool.h"
#include "dsec/sys/process.h"
#include "dsec/sys/sha256.h"
#include "commands.h"

namespace dsec::run_tool {

namespace pool = sandbox::pool;

namespace {

// A file's content digest, so that a policy or seccomp profile edited in place makes
// another pool.
Result<std::string> content_digest(const std::string& path) {
    auto h = sha256_file(path);
    if (!h) return fail(h.error());
    return "sha256:" + *h;
}

// One record per pool named (every pool of the run directory when none is); a pool that
// fails is reported and the others go on.
Result<int> each_pool(const Context& ctx, const std::vector<std::string>& given,
                      const std::function<Result<json>(const pool::Pool&)>& one) {
    auto keys = given.empty() ? pool::keys(ctx.sandbox_paths()) : Result<std::vector<std::string>>(given);
    if (!keys) return fail(keys.error());
    for (auto& k : *keys)
        if (!pool::valid_key(k))
            return fail(make_error(Code::usage, "\"" + k + "\" is not a pool key (16 hex digits, as pool ls shows)"));
    int status = cli::kExitOk;
    for (auto& k : *keys) {
        auto rec = one(pool::at(ctx.sandbox_paths(), k));
        if (!rec) {
            cli::report(rec.error());
            status = cli::kExitFailed;
        } else if (auto e = jsonl::emit(*rec); !e) {
            return fail(e.error());
        }
    }
    return status;
}

}  // namespace

Result<PoolSetup> pool_setup(const Context& ctx, const CreateArgs& a, bool memory_upper) {
    if (a.layers.empty()) return fail(make_error(Code::usage, "a pool needs --layers"));
    if (!a.id.empty())
        return fail(make_error(Code::usage, "--id names one sandbox, but a pool's sandboxes are made ahead under ids of their own"));
    PoolSetup s;
    auto options = a.to_options();
    if (!options) return fail(options.error());
    s.options = std::move(*options);
    s.options.layer_store = ctx.paths.layers();
    if (memory_upper && s.options.disk == 0) s.options.disk = sandbox::default_memory_upper_size();
    s.memory_upper = memory_upper;
    s.layers = a.layers;
    s.verify = a.verify;

    layer::Store store(ctx.paths.layers());
    json layers = json::array();
    for (auto& name : a.layers) {
        auto l = store.resolve(name);
        if (!l) return fail(l.error());
        layers.push_back({{"name", name}, {"digest", l->digest}});
    }
    json policy = nullptr, seccomp = a.seccomp;
    if (!a.policy.empty()) {
        auto d = content_digest(a.policy);
        if (!d) return fail(d.error());
        policy = {{"path", a.policy}, {"digest", *d}};
    }
    if (a.seccomp != "default" && a.seccomp != "unconfined") {
        auto d = content_digest(a.seccomp);
        if (!d) return fail(d.error());
        seccomp = {{"path", a.seccomp}, {"digest", *d}};
    }
    // Everything the sandboxes are created with, as typed (a value spelled two ways
    // makes two pools, never one pool serving two configurations).
    s.config = {{"v", 1},          {"layers", layers},         {"verify", a.verify},     {"memory_upper", memory_upper},
                {"hostname", a.hostname}, {"memory", a.memory}, {"memcg", a.memcg},    {"cpus", a.cpus},
                {"pids", a.pids},  {"disk", a.disk},           {"env", a.env},           {"workdir", a.workdir},
                {"user", a.user},  {"network", a.network},     {"ttl", a.ttl},           {"idle_ttl", a.idle_ttl},
                {"class", a.cpu_class}, {"labels", a.labels},  {"policy", policy},       {"userns", a.userns},
                {"cap_add", a.cap_add}, {"cap_drop", a.cap_drop}, {"seccomp", seccomp},  {"tmp_size", a.tmp_size},
                {"ulimits", a.ulimits}, {"binds", a.binds}};
    s.pool = pool::at(ctx.sandbox_paths(), pool::key_of(s.config));
    return s;
}

pool::Make pool_maker(const Context& ctx, const PoolSetup& s) {
    return [&ctx, &s](const std::string& id) -> Status {
        auto rootfs = rootfs_from_layers(ctx, s.layers, id, s.verify, !s.memory_upper);
        if (!rootfs) return fail(rootfs.error());
        sandbox::CreateOptions o = s.options;
        o.id = id;
        o.labels[pool::kLabel] = s.pool.key;
        auto made = sandbox::create(ctx.sandbox_paths(), *rootfs, o);
        if (!made) return fail(made.error());
        return {};
    };
}

void finish_in_background(const Context& ctx, const PoolSetup& s, const std::vector<std::string>& used) {
    auto paths = ctx.sandbox_paths();
    int handed[2];
    if (::pipe2(handed, O_CLOEXEC) < 0) return;  // nothing handed over: the next fill sweeps the claims
    pid_t child = ::fork();
    if (child == 0) {
        // The caller that reads our output to its end does not wait for the teardown and
        // the refill. It starts once its claims are its own (the parent closes the pipe
        // after handing them over, or dies).
        leave_caller(::open("/dev/null", O_RDWR | O_CLOEXEC), handed[0]);
        for (auto& id : used) {
            auto d = sandbox::destroy(paths, id, sandbox::Missing::ok);
            if (!d) {
                pool::note_error(s.pool, d.error());
                continue;  // its claim stays, for the next sweep to try again
            }
            pool::release(s.pool, id);
        }
        if (auto made = pool::fill(paths, s.pool, pool_maker(ctx, s)); !made) pool::note_error(s.pool, made.error());
        ::_exit(0);
    }
    ::close(handed[0]);
    // Not waited for: this process exits next, and the child goes to the reaper above.
    if (child > 0) {
        unsigned long long start = proc::process_start(child);
        for (auto& id : used)
            if (auto r = pool::hand_over(s.pool, id, child, start); !r) pool::note_error(s.pool, r.error());
    }
    ::close(handed[1]);
}

Result<int> run_pooled(const Context& ctx, const PoolSetup& s, size_t size, const sandbox::ExecOptions& eopts) {
    auto paths = ctx.sandbox_paths();
    if (auto r = pool::configure(s.pool, size, s.config); !r) return fail(r.error());
    std::vector<std::string> used;
    Result<sandbox::ExecResult> r = fail(make_error(Code::internal, "no sandbox tried"));
    for (;;) {
        auto drawn = pool::claim(paths, s.pool, used);
        if (!drawn) {
            finish_in_background(ctx, s, used);
            return fail(drawn.error());
        }
        std::string id;
        if (*drawn) {
            id = **drawn;
        } else {
            // None ready (the first run, or runs faster than the refill): made here, under
            // a claim of its own so that a crash before its teardown is swept like a drawn one.
            id = random_hex(kSandboxIdBytes);
            if (auto a = pool::adopt(s.pool, id); !a) {
                finish_in_background(ctx, s, used);
                return fail(a.error());
            }
            if (auto made = pool_maker(ctx, s)(id); !made) {
                (void)sandbox::destroy(paths, id, sandbox::Missing::ok);
                pool::release(s.pool, id);
                finish_in_background(ctx, s, used);
                return fail(made.error());
            }
        }
        used.push_back(id);
        r = sandbox::exec(paths, id, eopts);
        // A drawn sandbox whose init died after the draw checked it: the command did not
        // start there (not_running comes before anything runs), so the next one is tried.
        if (!r && *drawn && r.error().code == Code::not_running) continue;
        if (r && eopts.capture)
            if (auto e = jsonl::emit(r->to_record(id)); !e) r = fail(e.error());
        break;
    }
    std::cout.flush();
    finish_in_background(ctx, s, used);
    if (!r) return fail(r.error());
    if (!r->note.empty() && !eopts.capture) std::cerr << "dsec-run: " << r->note << std::endl;
    return r->exit_code;
}

void add_pool(CLI::App& app, Context& ctx) {
    auto* cmd = app.add_subcommand("pool", "sandboxes made ahead for run --pool: fill, ls, drain");
    cmd->require_subcommand(1, 1);
    cmd->footer(cli::example("  dsec-run pool fill -n 8 --layers base; dsec-run pool ls\n"
                             "  dsec-run run --pool 8 --layers base -- ./check; dsec-run pool drain"));

    struct FillArgs {
        CreateArgs create;
        size_t count = 1;
        bool upper_on_disk = false;
    };
    auto f = std::make_shared<FillArgs>();
    auto* fill = cmd->add_subcommand("fill", "create sandboxes until the pool of these create options holds N; prints its record");
    fill->footer(cli::example("  dsec-run pool fill -n 8 --layers base --memory 512M\n"
                              "  for t in tasks/*; do dsec-run run --pool 8 --layers base --memory 512M -- ./check $t; done"));
    add_create_options(fill, f->create);
    fill->add_option("-n,--count", f->count, "sandboxes the pool holds (default 1)")->check(CLI::Range(1, 10000));
    fill->add_flag("--upper-on-disk", f->upper_on_disk, "for runs with --upper-on-disk (the upper on local disk)");
    fill->callback([&ctx, f] {
        ctx.action = [&ctx, f]() -> Result<int> {
            auto s = pool_setup(ctx, f->create, !f->upper_on_disk);
            if (!s) return fail(s.error());
            if (auto r = pool::configure(s->pool, f->count, s->config); !r) return fail(r.error());
            cli::Progress bar("filling pool " + s->pool.key, f->count);
            auto made = pool::fill(ctx.sandbox_paths(), s->pool, pool_maker(ctx, *s),
                                   [&bar](size_t done, size_t) { bar.set(done); });
            if (!made) return fail(made.error());
            auto c = pool::census(s->pool);
            if (!c) return fail(c.error());
            if (auto e = jsonl::emit(c->to_record(s->pool.key)); !e) return fail(e.error());
            return cli::kExitOk;
        };
    });

    auto keys = std::make_shared<std::vector<std::string>>();
    auto* ls = cmd->add_subcommand("ls", "one record per pool: size, ready, making, claimed, config");
    ls->footer(cli::example("  dsec-run pool ls | jq '{key, ready, making}'"));
    ls->add_option("KEY", *keys, "pool keys (default: all)");
    ls->callback([&ctx, keys] {
        ctx.action = [&ctx, keys]() -> Result<int> {
            return each_pool(ctx, *keys, [](const pool::Pool& p) -> Result<json> {
                auto c = pool::census(p);
                if (!c) return fail(c.error());
                return c->to_record(p.key);
            });
        };
    });

    auto* drain = cmd->add_subcommand("drain", "destroy a pool's sandboxes and remove it (default: every pool)");
    drain->footer(cli::example("  dsec-run pool drain            # every pool of the run directory"));
    drain->add_option("KEY", *keys, "pool keys (default: all)");
    drain->callback([&ctx, keys] {
        ctx.action = [&ctx, keys]() -> Result<int> {
            return each_pool(ctx, *keys, [&ctx](const pool::Pool& p) -> Result<json> {
                auto d = pool::drain(ctx.sandbox_paths(), p);
                if (!d) return fail(d.error());
                return json{{"type", "pool"}, {"key", p.key}, {"state", "drained"}, {"destroyed", d->size()}};
            });
        };
    });
}

}  // namespace dsec::run_tool
