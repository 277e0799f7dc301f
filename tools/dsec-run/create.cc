// dsec-run create: rootfs records (or --layers) in, sandbox records out.
#include "dsec/sandbox/limits.h"
#include "dsec/snapshot/reset.h"
#include "commands.h"

namespace dsec::run_tool {

void add_create_options(CLI::App* cmd, CreateArgs& a) {
    cmd->add_option("--id", a.id, "sandbox id (one sandbox only; default: the rootfs's id or a random one)");
    cmd->add_option("--hostname", a.hostname, "hostname inside the sandbox (default: the id)");
    cmd->add_option("--memory", a.memory, "memory limit, e.g. 512M, 2G (memory+swap on v1 when available)");
    cmd->add_option("--memcg", a.memcg,
                    "memory cgroup: own (default), or shared by the run directory's sandboxes (dense idle fleets; "
                    "no --memory)")
        ->check(CLI::IsMember({"own", "shared"}));
    cmd->add_option("--cpus", a.cpus, "CPU limit in CPUs, e.g. 0.5, 2");
    cmd->add_option("--pids", a.pids, "most tasks the sandbox may have (at least 2; default 4096; max: no limit)");
    cmd->add_option("--disk", a.disk, "cap on what the sandbox may write, e.g. 1G (upper on a tmpfs of that size)");
    cmd->add_option("-e,--env", a.env, "K=V in the sandbox's environment (repeatable)")->allow_extra_args(false);
    cmd->add_option("-w,--workdir", a.workdir, "working directory of commands (default: the image's, else /)");
    cmd->add_option("-u,--user", a.user, "USER[:GROUP] commands run as, numbers or names from the image's /etc/passwd and /etc/group (default: the image's user, else 0)");
    cmd->add_option("--network", a.network, "network: none (a private loopback, up; the only choice so far)")
        ->check(CLI::IsMember({"none"}));
    cmd->add_option("--ttl", a.ttl, "lifetime, e.g. 30m, recorded for dsec-reclaim");
    cmd->add_option("--idle-ttl", a.idle_ttl, "idle lifetime since the last exec, e.g. 10m, recorded for dsec-reclaim");
    cmd->add_option("--class", a.cpu_class, "CPU class: latency, or batch (SCHED_IDLE, lowest CPU weight)")
        ->capture_default_str();
    cmd->add_option("--label", a.labels, "k=v label (repeatable)")->allow_extra_args(false);
    cmd->add_option("--policy", a.policy, "dsec-guard policy file (JSON), applied at create (see dsec-guard(1))");
    cmd->add_option("--layers", a.layers, "layer names base first (a,b,c): mount them and make a rootfs, no stdin")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->add_flag("--verify", a.verify, "with --layers: verify each layer's digest before mounting it");
    cmd->add_option("--userns", a.userns,
                    "private (default: root inside is an unprivileged host id) or host (UNSAFE: root inside is host root)")
        ->check(CLI::IsMember({"private", "host"}));
    cmd->add_option("--cap-add", a.cap_add, "capability root inside keeps besides the default set (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--cap-drop", a.cap_drop, "capability to drop from the default set, or ALL (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--seccomp", a.seccomp, "seccomp profile: default, unconfined, or a profile file (JSON)");
    cmd->add_option("--tmp-size", a.tmp_size, "size of the tmpfs behind /tmp, /dev/shm and /dev (default 256M)");
    cmd->add_option("--ulimit", a.ulimits, "resource limit NAME=SOFT[:HARD] for nofile, core, fsize (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--bind", a.binds, "host path SRC at DST inside, SRC:DST[:ro|rw], read-only by default (repeatable)")
        ->allow_extra_args(false);
}

Result<std::vector<json>> read_records() {
    jsonl::Reader reader;
    std::vector<json> out;
    for (;;) {
        auto rec = reader.next();
        if (!rec) return fail(rec.error());
        if (!*rec) return out;
        out.push_back(std::move(**rec));
    }
}

void add_create(CLI::App& app, Context& ctx) {
    struct Opts {
        CreateArgs args;
        size_t parallel = 1;
        bool standby = false;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("create", "create sandboxes from rootfs records on stdin (or --layers)");
    cmd->footer(cli::example("  dsec-run create --layers base --memory 512M --cpus 1 --ttl 30m\n"
                             "  dsec-layer ls base | dsec-mount --count 100 | dsec-run create -P 8 > boxes.jsonl"));
    add_create_options(cmd, o->args);
    cmd->add_option("-P,--parallel", o->parallel, "create up to N sandboxes at once")->check(CLI::Range(1, 256));
    cmd->add_flag("--standby", o->standby, "keep a stopped init ready for the first reset (see reset --standby)");
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto options = o->args.to_options();
            if (!options) return fail(options.error());
            options->layer_store = ctx.paths.layers();
            auto paths = ctx.sandbox_paths();
            if (!o->args.layers.empty()) {
                std::string id = options->id.empty() ? random_hex(kSandboxIdBytes) : options->id;
                auto rootfs = rootfs_from_layers(ctx, o->args.layers, id, o->args.verify);
                if (!rootfs) return fail(rootfs.error());
                auto rec = sandbox::create(paths, *rootfs, *options);
                if (!rec) return fail(rec.error());
                if (auto r = jsonl::emit(*rec); !r) return fail(r.error());
                // (after the record: the sandbox runs already)
                if (o->standby)
                    if (auto r = snapshot::keep_standby(ctx.paths, rec->value("id", "")); !r) return fail(r.error());
                return 0;
            }
            auto records = read_records();
            if (!records) return fail(records.error());
            if (!options->id.empty() && records->size() > 1)
                return fail(make_error(Code::usage, "--id names one sandbox, but stdin has " +
                                                    std::to_string(records->size()) + " rootfs records"));
            size_t failed = for_each_parallel(records->size(), o->parallel, [&](size_t i) -> Status {
                const json& r = (*records)[i];
                if (jsonl::type_of(r) != "rootfs")
                    return fail(make_error(Code::bad_input, "expected a rootfs record, got type \"" + jsonl::type_of(r) +
                                                            "\" (pipe dsec-mount's output)"));
                auto rootfs = mount::Rootfs::from_record(r);
                if (!rootfs) return fail(std::move(rootfs.error()).about(r.value("id", "")));
                auto rec = sandbox::create(paths, *rootfs, *options);
                if (!rec) return fail(std::move(rec.error()).about(options->id.empty() ? rootfs->id : options->id));
                if (auto r = jsonl::emit(*rec); !r || !o->standby) return r;
                if (auto r = snapshot::keep_standby(ctx.paths, rec->value("id", "")); !r) return fail(std::move(r.error()).about(rec->value("id", "")));
                return {};
            });
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

}  // namespace dsec::run_tool
