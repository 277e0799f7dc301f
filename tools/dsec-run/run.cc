// dsec-run run: the function kind. Create from layers, exec once, destroy.
#include <unistd.h>

#include <iostream>

#include "dsec/sandbox/disk.h"
#include "commands.h"

namespace dsec::run_tool {

namespace {
// A one-shot whose init left with its command's status, nothing else at work inside
// (DSEC_EXEC_INIT_LEAVES): nothing of it runs on, so we exit with `code` at once and its
// teardown (the init's exit, the cgroups, the id range, the state) goes on in a child
// (exit_leaving), as bubblewrap returns before its pid 1 has gone; what the child cannot
// finish, dsec-reclaim gc does. Returns only if no child could be made (destroy then in
// place).
void exit_destroying_behind(const sandbox::Paths& paths, const std::string& id, int code) {
    exit_leaving(code, [&] { (void)sandbox::destroy(paths, id, sandbox::Missing::ok); });
}
}  // namespace

void add_run(CLI::App& app, Context& ctx) {
    struct Opts {
        CreateArgs create;
        ExecArgs exec;
        bool keep = false, upper_on_disk = false;
        size_t pool = 0;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("run", "create a sandbox from --layers, run one command, destroy it");
    cmd->footer(cli::example("  dsec-run run --layers base -- python3 -c 'print(1)'   # exit status: the command's\n"
                             "  dsec-run run --layers base,tools --memory 1G --timeout 30s --json -- make test\n"
                             "  dsec-run run --pool 4 --layers base -- ./grade   # from 4 made ahead, refilled behind"));
    cli::takes_command(cmd);
    add_create_options(cmd, o->create);
    add_exec_options(cmd, o->exec, false);
    cmd->add_flag("--keep", o->keep, "keep the sandbox afterwards (its record goes to stderr; its upper is on disk)");
    cmd->add_flag("--upper-on-disk", o->upper_on_disk,
                  "keep the writable upper on local disk as create does (default: in memory, at most --disk)");
    cmd->add_option("--pool", o->pool,
                    "draw the sandbox from N made ahead with the same create options, refilled and torn down "
                    "in the background (see dsec-run pool)")
        ->check(CLI::Range(1, 10000));
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            if (o->create.layers.empty()) return fail(make_error(Code::usage, "run needs --layers"));
            if (o->pool > 0) {
                if (o->keep) return fail(make_error(Code::usage, "--keep and --pool: a drawn sandbox is torn down after its command"));
                auto eopts = o->exec.to_options(ctx.command);
                if (!eopts) return fail(eopts.error());
                eopts->log = false;  // its sandbox's log goes with the sandbox
                auto setup = pool_setup(ctx, o->create, !o->upper_on_disk);
                if (!setup) return fail(setup.error());
                return run_pooled(ctx, *setup, o->pool, *eopts);
            }
            auto copts = o->create.to_options();
            if (!copts) return fail(copts.error());
            copts->layer_store = ctx.paths.layers();
            auto eopts = o->exec.to_options(ctx.command);
            if (!eopts) return fail(eopts.error());
            // The sandbox's command log goes with it, unless it is kept.
            eopts->log = o->keep;
            auto paths = ctx.sandbox_paths();
            // A name of the caller's may be used again the moment we return: its teardown is
            // waited for.
            bool named = !copts->id.empty();
            std::string id = named ? copts->id : random_hex(kSandboxIdBytes);
            copts->id = id;
            // Nothing of a one-shot sandbox outlives it, so its upper is a tmpfs: no directories
            // made and removed on the host's disk (each removal a discard where the disk
            // asks for them) and no sync of that whole filesystem when the overlay goes.
            bool memory_upper = !o->keep && !o->upper_on_disk;
            // Nor does its init: it runs in a copy of us, without starting dsec-init (ns/init.h).
            copts->init_in_process = !o->keep;
            // That init leaves once this command has ended (ns/init.h): its end is the sandbox's.
            eopts->ends_sandbox = copts->init_in_process;
            if (memory_upper && copts->disk == 0) copts->disk = sandbox::default_memory_upper_size();
            auto rootfs = rootfs_from_layers(ctx, o->create.layers, id, o->create.verify, !memory_upper);
            if (!rootfs) return fail(rootfs.error());
            // The command is asked for while the init sets itself up, and starts the moment
            // it is ready. A request that cannot go ahead goes as any exec's, after create.
            sandbox::SentAhead ahead;
            copts->while_starting = [&](const sandbox::State& creating) {
                if (auto sent = sandbox::send_ahead(paths, creating, *eopts)) ahead = std::move(*sent);
            };
            auto made = sandbox::create(paths, *rootfs, *copts);
            if (!made) return fail(made.error());
            auto r = sandbox::exec(paths, id, *eopts, std::move(ahead));
            auto answer = [&]() -> Result<int> {
                if (!r) return fail(r.error());
                if (eopts->capture)
                    if (auto e = jsonl::emit(r->to_record(id)); !e) return fail(e.error());
                if (!r->note.empty() && !eopts->capture) std::cerr << "dsec-run: " << r->note << std::endl;
                return r->exit_code;
            };
            if (o->keep) {
                std::cerr << jsonl::line_of(*made) << std::endl;
                return answer();
            }
            if (r && r->init_left && !named) {
                auto out = answer();
                if (out) exit_destroying_behind(paths, id, *out);
                if (auto d = sandbox::destroy(paths, id, sandbox::Missing::ok); !d) cli::report(d.error());
                return out;
            }
            sandbox::Remains remains;
            if (auto d = sandbox::destroy(paths, id, sandbox::Missing::ok, "", &remains); !d) cli::report(d.error());
            auto out = answer();
            if (out && remains) exit_leaving_remains(*out, remains);
            (void)remains.finish();
            return out;
        };
    });
}

}  // namespace dsec::run_tool
