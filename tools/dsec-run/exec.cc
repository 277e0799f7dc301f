// dsec-run exec: a command in live sandboxes, streamed (one id) or as result records.
#include "dsec/sandbox/limits.h"
#include "commands.h"

namespace dsec::run_tool {

void add_exec_options(CLI::App* cmd, ExecArgs& a, bool overrides) {
    cmd->add_flag("--json", a.json, "capture output into one result record per sandbox instead of streaming it");
    cmd->add_flag("-i,--interactive", a.interactive, "relay stdin to the command (the default without --json)");
    cmd->add_flag("--no-stdin", a.no_stdin, "the command's stdin is /dev/null (the default with --json)");
    cmd->add_flag("-t,--tty", a.tty, "give the command a pseudo-terminal (a terminal on stdin goes into raw mode)");
    cmd->add_option("--timeout", a.timeout, "kill the command's tree after this long, e.g. 30s, 10m");
    cmd->add_option("--no-output-timeout", a.no_output_timeout, "kill the command's tree after this long without output");
    cmd->add_option("--output-limit", a.output_limit,
                    "with --json, bytes of stdout and of stderr kept; with -d, each stream's file cap (default 1M)");
    if (!overrides) return;
    cmd->add_option("-e,--env", a.env, "K=V added to the sandbox's environment for this command (repeatable)")->allow_extra_args(false);
    cmd->add_option("-w,--workdir", a.workdir, "working directory for this command");
    cmd->add_option("-u,--user", a.user, "USER[:GROUP] for this command (numbers, or names from the sandbox's /etc/passwd and /etc/group)");
}

Result<sandbox::ExecOptions> ExecArgs::to_options(const std::vector<std::string>& argv) const {
    sandbox::ExecOptions o;
    o.argv = argv;
    if (argv.empty()) return fail(make_error(Code::usage, "no command: put it after \"--\""));
    o.capture = json;
    o.tty = tty;
    if (json && tty) return fail(make_error(Code::usage, "--json and --tty do not mix"));
    if (interactive && no_stdin) return fail(make_error(Code::usage, "--interactive and --no-stdin do not mix"));
    // Our stdin is relayed through a pipe (never handed over): streaming mode relays it
    // unless --no-stdin, --json only with -i (as docker does without -i).
    o.input = interactive || (!json && !no_stdin) ? sandbox::Stdin::relay : sandbox::Stdin::null;
    for (auto [text, out] : {std::pair{&timeout, &o.timeout_ms}, std::pair{&no_output_timeout, &o.no_output_timeout_ms}}) {
        if (text->empty()) continue;
        auto d = sandbox::parse_duration_ms(*text);
        if (!d) return fail(d.error());
        *out = *d;
    }
    auto limit = sandbox::parse_size(output_limit);
    if (!limit) return fail(limit.error());
    o.output_limit = *limit;
    if (auto r = sandbox::check_env(env, "--env"); !r) return fail(r.error());
    o.env = env;
    if (!user.empty())
        if (auto u = parse::check_user(user); !u) return fail(u.error());
    o.user = user;
    o.workdir = workdir;
    return o;
}

void add_exec(CLI::App& app, Context& ctx) {
    struct Opts {
        std::string id;
        ExecArgs args;
        size_t parallel = 1;
        bool detach = false;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("exec", "run a command in a sandbox (ID) or in each sandbox record on stdin");
    cmd->footer(cli::example("  dsec-run exec box1 -- uname -a            # exit status: the command's\n"
                             "  dsec-run exec -it box1 -- sh\n"
                             "  e=$(dsec-run exec -d box1 -- make test | jq -r .exec); dsec-run logs -f box1 $e\n"
                             "  dsec-run ls --label job=eval | dsec-run exec -P 8 --json -- uname -r"));
    cli::takes_command(cmd);
    cmd->add_option("ID", o->id, "sandbox id; none: sandbox records on stdin, one result record each");
    add_exec_options(cmd, o->args);
    cmd->add_flag("-d,--detach", o->detach,
                  "start the command and return at once with its exec record; see logs and wait");
    cmd->add_option("-P,--parallel", o->parallel, "with records on stdin: run in up to N sandboxes at once")
        ->check(CLI::Range(1, 256));
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto options = o->args.to_options(ctx.command);
            if (!options) return fail(options.error());
            auto paths = ctx.sandbox_paths();
            if (o->detach) return exec_detached(ctx, o->id, o->args, *options);
            if (!o->id.empty()) {
                auto r = sandbox::exec(paths, o->id, *options);
                if (!r) return fail(std::move(r.error()).about(o->id));
                if (options->capture)
                    if (auto e = jsonl::emit(r->to_record(o->id)); !e) return fail(e.error());
                if (!r->note.empty() && !options->capture) std::cerr << "dsec-run: " << r->note << std::endl;
                return r->exit_code;
            }
            // A batch: stdin holds records, so the commands cannot read it; results are records.
            if (options->tty) return fail(make_error(Code::usage, "--tty needs one sandbox ID"));
            if (o->args.interactive) return fail(make_error(Code::usage, "--interactive needs one sandbox ID"));
            options->capture = true;
            options->input = sandbox::Stdin::null;
            auto records = read_records();
            if (!records) return fail(records.error());
            size_t failed = for_each_parallel(records->size(), o->parallel, [&](size_t i) -> Status {
                auto id = jsonl::get_string((*records)[i], "id");
                if (!id) return fail(id.error());
                auto r = sandbox::exec(paths, *id, *options);
                if (!r) return fail(std::move(r.error()).context("sandbox " + *id).about(*id));
                return jsonl::emit(r->to_record(*id));
            });
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

}  // namespace dsec::run_tool
