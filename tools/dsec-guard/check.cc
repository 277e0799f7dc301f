// dsec-guard check POLICY...: one policy record per valid file, an error per bad one.
#include <cstdlib>

#include "dsec/guard/policy.h"
#include "dsec/json/jsonl.h"
#include "commands.h"

namespace dsec::guard_tool {

namespace {
Status check_one(const std::string& file) {
    auto policy = guard::load_policy(file);
    if (!policy) return fail(policy.error());
    char* abs = ::realpath(file.c_str(), nullptr);
    std::string path = abs ? abs : file;
    std::free(abs);
    auto record = guard::check_record(*policy, path);
    if (!record) return fail(std::move(record.error()).context(file));
    return jsonl::emit(std::move(*record));
}
}  // namespace

void add_check(CLI::App& app, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("check", "validate policies and print what each compiles to");
    cmd->footer(cli::example("  dsec-guard check examples/policies/*.json | jq -c .network"));
    cmd->add_option("POLICY", *files, "policy files (JSON)")->required();
    cmd->callback([&ctx, files] {
        ctx.action = [files]() -> Result<int> {
            int failed = 0;
            for (auto& f : *files) {
                if (auto r = check_one(f); !r) {
                    if (files->size() == 1) return fail(r.error());
                    cli::report(r.error());
                    failed++;
                }
            }
            return failed ? cli::kExitFailed : cli::kExitOk;
        };
    });
}

}  // namespace dsec::guard_tool
