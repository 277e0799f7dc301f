// dsec-run exec -d, logs and wait: commands left running in a sandbox, their output and end.
#include <unistd.h>

#include "dsec/sandbox/detached.h"
#include "commands.h"

namespace dsec::run_tool {

Result<int> exec_detached(const Context& ctx, const std::string& id, const ExecArgs& args,
                          const sandbox::ExecOptions& options) {
    // Nothing to relay or show: the command's stdin is /dev/null, its output goes to files.
    if (args.tty || args.interactive) return fail(make_error(Code::usage, "--detach does not mix with --tty or --interactive"));
    if (args.json) return fail(make_error(Code::usage, "--detach prints an exec record, not a result: drop --json"));
    auto paths = ctx.sandbox_paths();
    std::vector<std::string> ids;
    if (!id.empty()) ids.push_back(id);
    auto all = ids_or_records(ids);
    if (!all) return fail(all.error());
    // One after the other: each start forks its supervisor from this process.
    int rc = cli::kExitOk;
    for (auto& each : *all) {
        auto r = sandbox::exec_detached(paths, each, options);
        if (!r) {
            if (!id.empty()) return fail(std::move(r.error()).about(each));
            cli::report(std::move(r.error()).context("sandbox " + each).about(each));
            rc = cli::kExitFailed;
            continue;
        }
        if (auto e = jsonl::emit(*r); !e) return fail(e.error());
    }
    return rc;
}

namespace {
// What logs and wait take: ID and an optional exec key.
struct ExecRef {
    std::string id, exec;
    bool follow = false;
};

// A subcommand NAME ID [EXEC] with its description and example.
std::pair<CLI::App*, std::shared_ptr<ExecRef>> add_exec_ref(CLI::App& app, const std::string& name,
                                                             const std::string& what, const std::string& example,
                                                             const std::string& no_exec) {
    auto* cmd = app.add_subcommand(name, what);
    cmd->footer(cli::example("  e=$(dsec-run exec -d box1 -- make test | jq -r .exec)\n" + example));
    auto o = std::make_shared<ExecRef>();
    cmd->add_option("ID", o->id, "sandbox id")->required();
    cmd->add_option("EXEC", o->exec, "exec key from exec -d's record; none: " + no_exec);
    return {cmd, o};
}
}  // namespace

void add_logs(CLI::App& app, Context& ctx) {
    auto [cmd, ref] = add_exec_ref(app, "logs", "output of a detached exec (exec -d): its stdout and stderr as it wrote them",
                                   "  dsec-run logs -f box1 $e              # until the command ends\n"
                                   "  dsec-run logs box1 2>/dev/null        # the latest detached exec, stdout only",
                                   "the latest detached exec");
    auto o = ref;  // a plain variable: clang before 16 cannot capture a structured binding
    cmd->add_flag("-f,--follow", o->follow, "keep printing output until the command ends");
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            if (auto r = sandbox::check_id(o->id); !r) return fail(r.error());
            auto r = sandbox::print_detached_output(ctx.sandbox_paths(), o->id, o->exec, o->follow, STDOUT_FILENO,
                                                    STDERR_FILENO);
            if (!r) return fail(std::move(r.error()).about(o->id));
            return cli::kExitOk;
        };
    });
}

void add_wait(CLI::App& app, Context& ctx) {
    auto [cmd, ref] = add_exec_ref(app, "wait", "wait for a detached exec to end (exit status: its command's), or for a sandbox's end",
                                   "  dsec-run wait box1 $e | jq .exit_code   # exit status: make's\n"
                                   "  dsec-run wait box1                      # until it is destroyed or its TTL ends",
                                   "wait for the sandbox itself");
    auto o = ref;
    cmd->callback([&ctx, o] {
        ctx.action = [&ctx, o]() -> Result<int> {
            auto paths = ctx.sandbox_paths();
            if (auto r = sandbox::check_id(o->id); !r) return fail(r.error());
            auto r = o->exec.empty() ? sandbox::wait_sandbox(paths, o->id) : sandbox::wait_detached(paths, o->id, o->exec);
            if (!r) return fail(std::move(r.error()).about(o->id));
            if (auto e = jsonl::emit(*r); !e) return fail(e.error());
            return o->exec.empty() ? cli::kExitOk : r->value("exit_code", cli::kExitFailed);
        };
    });
}

}  // namespace dsec::run_tool
