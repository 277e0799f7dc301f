// What every dsec-reclaim subcommand shares: the report and duration options.
#include "dsec/sandbox/limits.h"
#include "commands.h"

namespace dsec::reclaim_tool {

reclaim::Report Context::report() {
    return {[](nlohmann::json e) { return jsonl::emit(std::move(e)); },
            [this](const Error& e) {
                cli::report(e);
                problems++;
            }};
}

Result<int64_t> milliseconds(const std::string& text, const char* option) {
    auto ms = sandbox::parse_duration_ms(text);
    if (!ms) return fail(make_error(Code::usage, std::string(option) + ": " + ms.error().detail()));
    return int64_t(*ms);
}

Result<int64_t> seconds(const std::string& text, const char* option) {
    auto ms = milliseconds(text, option);
    if (!ms) return fail(ms.error());
    return *ms / 1000;
}

}  // namespace dsec::reclaim_tool
