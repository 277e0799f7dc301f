// dsec-run's subcommands, one registration function each (dsec-layer's shape). Each adds
// its subcommand to `app` and, when chosen, fills ctx.action with the work to do.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dsec/cli/cli.h"
#include "dsec/json/jsonl.h"
#include "dsec/sandbox/create_args.h"
#include "dsec/sandbox/exec.h"
#include "dsec/sandbox/pool.h"
#include "dsec/sandbox/sandbox.h"

namespace dsec::run_tool {

using nlohmann::json;
using Action = std::function<Result<int>()>;

struct Context {
    cli::Paths paths;
    Action action;
    std::vector<std::string> command;  // what follows "--" on the command line
    bool has_command = false;
    sandbox::Paths sandbox_paths() const { return sandbox::Paths(paths); }
};

using sandbox::CreateArgs;
void add_create_options(CLI::App* cmd, CreateArgs& args);

/// The exec options as typed.
struct ExecArgs {
    bool json = false, tty = false, interactive = false, no_stdin = false;
    std::string timeout, no_output_timeout, output_limit = "1M", workdir, user;
    std::vector<std::string> env;
    Result<sandbox::ExecOptions> to_options(const std::vector<std::string>& argv) const;
};
/// `overrides`: also --env/--workdir/--user (run takes those from the create options).
void add_exec_options(CLI::App* cmd, ExecArgs& args, bool overrides = true);

/// Runs `work` on each item with up to `parallel` threads; results go out as they finish.
/// Failed items are reported as error records. Returns how many failed.
size_t for_each_parallel(size_t count, size_t parallel, const std::function<Status(size_t)>& work);

/// Reads every record on stdin (error records are passed through by the reader).
Result<std::vector<json>> read_records();

/// `ids` when there are any, else the "id" of every record on stdin.
Result<std::vector<std::string>> ids_or_records(const std::vector<std::string>& ids);

/// Makes a rootfs from layer names with mount::make_rootfs (mounting layers as needed);
/// without `disk_upper`, one with no upper and work directories (for an in-memory upper).
Result<mount::Rootfs> rootfs_from_layers(const Context& ctx, const std::vector<std::string>& layers,
                                         const std::string& id, bool verify, bool disk_upper = true);

/// A pool's create configuration (pool.cc): the options checked, the key made of them.
struct PoolSetup {
    sandbox::CreateOptions options;  // id empty; disk set for an in-memory upper
    std::vector<std::string> layers;
    bool verify = false, memory_upper = true;
    nlohmann::json config;           // what the key is the digest of
    sandbox::pool::Pool pool;
};
/// Errors: usage (no --layers, an --id), the options' own, a layer not in the store, a
/// policy or seccomp file that cannot be read.
Result<PoolSetup> pool_setup(const Context& ctx, const CreateArgs& args, bool memory_upper);
/// The most descriptors leave_caller keeps besides stdio and the one it waits on.
inline constexpr size_t kMaxKept = 8;

/// In a child that works on after we have exited: a session of its own, `null` as its
/// stdio and no other descriptor of the caller's but `keep` (at most kMaxKept, any beyond
/// closed; a caller that reads our output to its end does not wait for it); returns once
/// `wait_fd` reads EOF (the parent's end closed: it has gone, or handed over what it had
/// to), with `wait_fd` closed. Allocates nothing.
void leave_caller(int null, int wait_fd, std::span<const int> keep = {});

/// Exits with `code` (as cli::main would end it: cli::exit_code) at once and leaves
/// `work` to a child of ours (dsec-teardown) that starts once we have gone, holding only
/// `keep` of our descriptors (leave_caller).
/// Returns only if no child could be made, or on an interrupt: the caller then does the
/// work itself.
void exit_leaving(int code, const std::function<void()>& work, std::span<const int> keep = {});
/// exit_leaving with what is left of a destroyed sandbox as the work (Remains::finish).
void exit_leaving_remains(int code, sandbox::Remains& remains);

/// run --pool: draws a sandbox made ahead (or makes one when none is ready), runs the
/// command in it, and leaves its teardown and the refill to a background process.
Result<int> run_pooled(const Context& ctx, const PoolSetup& setup, size_t size, const sandbox::ExecOptions& options);

void add_create(CLI::App& app, Context& ctx);
void add_pool(CLI::App& app, Context& ctx);
void add_exec(CLI::App& app, Context& ctx);
void add_run(CLI::App& app, Context& ctx);
void add_destroy(CLI::App& app, Context& ctx);
void add_query(CLI::App& app, Context& ctx);  // ls, inspect
void add_cp(CLI::App& app, Context& ctx);
void add_snapshot(CLI::App& app, Context& ctx);
void add_fork(CLI::App& app, Context& ctx);
void add_reset(CLI::App& app, Context& ctx);  // snapshot.cc
void add_control(CLI::App& app, Context& ctx);  // kill, stats
void add_session(CLI::App& app, Context& ctx);  // session open, exec, ls, close
void add_log(CLI::App& app, Context& ctx);
void add_logs(CLI::App& app, Context& ctx);  // detached.cc: logs, wait
void add_wait(CLI::App& app, Context& ctx);
/// exec -d: one detached exec in sandbox `id`, or in each sandbox record on stdin.
Result<int> exec_detached(const Context& ctx, const std::string& id, const ExecArgs& args,
                          const sandbox::ExecOptions& options);

}  // namespace dsec::run_tool
