// dsec-run session: persistent shells in a sandbox (open, exec, ls, close).
#include "dsec/sandbox/limits.h"
#include "dsec/sandbox/session.h"
#include "commands.h"

namespace dsec::run_tool {

namespace {
// The command string: what follows "--", words joined by spaces (as `sh -c` would take them).
std::string command_string(const std::vector<std::string>& words) {
    std::string s;
    for (auto& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
}
}  // namespace

void add_session(CLI::App& app, Context& ctx) {
    auto* session = app.add_subcommand("session", "persistent shells in a sandbox: cd, variables and jobs carry over");
    session->require_subcommand(1, 1);
    session->footer(cli::example("  s=$(dsec-run session open box1 | jq -r .id)\n"
                                 "  dsec-run session exec $s -- 'cd /src'; dsec-run session exec $s -- make test\n"
                                 "  dsec-run session close $s"));

    struct OpenArgs {
        std::string id;
        sandbox::SessionOptions options;
    };
    auto op = std::make_shared<OpenArgs>();
    auto* open = session->add_subcommand("open", "start a shell in a sandbox; prints a session record");
    open->footer(cli::example("  dsec-run session open box1 -w /src -e CI=1 | jq -r .id"));
    open->add_option("ID", op->id, "sandbox id")->required();
    open->add_option("--shell", op->options.shell, "the shell to run (default /bin/sh)");
    open->add_option("-e,--env", op->options.env, "K=V added to the sandbox's environment (repeatable)")->allow_extra_args(false);
    open->add_option("-w,--workdir", op->options.workdir, "the shell's first working directory");
    open->add_option("-u,--user", op->options.user, "USER[:GROUP] the shell runs as (numbers or names)");
    open->add_flag("-t,--pty", op->options.pty, "commands run on a terminal inside (stdout and stderr merged)");
    open->callback([&ctx, op] {
        ctx.action = [&ctx, op]() -> Result<int> {
            if (auto r = sandbox::check_env(op->options.env, "--env"); !r) return fail(r.error());
            if (!op->options.user.empty())
                if (auto u = parse::check_user(op->options.user); !u) return fail(u.error());
            auto r = sandbox::open_session(ctx.sandbox_paths(), op->id, op->options);
            if (!r) return fail(r.error());
            if (auto e = jsonl::emit(*r); !e) return fail(e.error());
            return cli::kExitOk;
        };
    });

    struct ExecArgs {
        std::string session, timeout, no_output_timeout, output_limit = "1M";
    };
    auto ex = std::make_shared<ExecArgs>();
    auto* exec = session->add_subcommand("exec", "run a command string in a session's shell; prints a result record");
    exec->footer(cli::example("  dsec-run session exec $s --timeout 10m -- 'export CC=clang; make -j2'   # exit status: the command's"));
    cli::takes_command(exec);
    exec->add_option("SESSION", ex->session, "session id (from session open)")->required();
    exec->add_option("--timeout", ex->timeout, "kill what the command started after this long, e.g. 30s");
    exec->add_option("--no-output-timeout", ex->no_output_timeout, "kill what the command started after this long without output");
    exec->add_option("--output-limit", ex->output_limit, "bytes of stdout and of stderr kept (default 1M)");
    exec->callback([&ctx, ex] {
        ctx.action = [&ctx, ex]() -> Result<int> {
            if (ctx.command.empty()) return fail(make_error(Code::usage, "no command: put it after \"--\""));
            auto ref = sandbox::SessionRef::parse(ex->session);
            if (!ref) return fail(ref.error());
            sandbox::ExecOptions o;
            for (auto [text, out] : {std::pair{&ex->timeout, &o.timeout_ms}, std::pair{&ex->no_output_timeout, &o.no_output_timeout_ms}}) {
                if (text->empty()) continue;
                auto d = sandbox::parse_duration_ms(*text);
                if (!d) return fail(d.error());
                *out = *d;
            }
            auto limit = sandbox::parse_size(ex->output_limit);
            if (!limit) return fail(limit.error());
            o.output_limit = *limit;
            auto r = sandbox::session_exec(ctx.sandbox_paths(), *ref, command_string(ctx.command), o);
            if (!r) return fail(r.error());
            json rec = r->to_record(ref->sandbox);
            rec["session"] = ref->id();
            if (auto e = jsonl::emit(rec); !e) return fail(e.error());
            return r->exit_code;
        };
    });

    auto ls_id = std::make_shared<std::string>();
    auto* ls = session->add_subcommand("ls", "session records of a sandbox, or of every sandbox");
    ls->footer(cli::example("  dsec-run session ls box1 | jq -r .id"));
    ls->add_option("ID", *ls_id, "sandbox id");
    ls->callback([&ctx, ls_id] {
        ctx.action = [&ctx, ls_id]() -> Result<int> {
            auto list = sandbox::list_sessions(ctx.sandbox_paths(), *ls_id);
            if (!list) return fail(list.error());
            for (auto& rec : *list)
                if (auto r = jsonl::emit(rec); !r) return fail(r.error());
            return cli::kExitOk;
        };
    });

    auto sessions = std::make_shared<std::vector<std::string>>();
    auto* close = session->add_subcommand("close", "end sessions: their shells and whatever they still run");
    close->footer(cli::example("  dsec-run session ls box1 | jq -r .id | xargs -r dsec-run session close"));
    close->add_option("SESSION", *sessions, "session ids")->required();
    close->callback([&ctx, sessions] {
        ctx.action = [&ctx, sessions]() -> Result<int> {
            int rc = cli::kExitOk;
            for (auto& s : *sessions) {
                auto ref = sandbox::SessionRef::parse(s);
                if (!ref) return fail(ref.error());
                auto r = sandbox::close_session(ctx.sandbox_paths(), *ref);
                if (!r) {
                    cli::report(r.error());
                    rc = cli::kExitFailed;
                    continue;
                }
                if (auto e = jsonl::emit(*r); !e) return fail(e.error());
            }
            return rc;
        };
    });
}

}  // namespace dsec::run_tool
