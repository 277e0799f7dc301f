#include "dsec/cli/help.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

#include "dsec/cli/cli.h"

namespace dsec::cli {

namespace {
std::mutex marked_mutex;
std::set<const CLI::App*>& marked() {
    static std::set<const CLI::App*> apps;
    return apps;
}

bool is_marked(const CLI::App* app) {
    std::lock_guard lock(marked_mutex);
    return marked().count(app) != 0;
}

// The value's name as a person reads it: the long name in capitals (--memory MEMORY),
// or the choices when there are a few ({none,lz4,lz4hc}).
std::string value_name(const CLI::Option* opt) {
    const std::string& type = opt->get_type_name();
    if (auto open = type.find('{'); open != std::string::npos) return type.substr(open, type.find('}', open) + 1 - open);
    std::string name = opt->get_lnames().empty() ? opt->get_name() : opt->get_lnames().front();
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return c == '-' ? '_' : char(std::toupper(c)); });
    return name;
}

class PlainFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App* app, std::string name) const override {
        std::string line = CLI::Formatter::make_usage(app, std::move(name));
        if (is_marked(app) && !line.empty() && line.back() == '\n') line.insert(line.size() - 1, " -- CMD [ARG...]");
        return line;
    }

    std::string make_option_opts(const CLI::Option* opt) const override {
        if (opt->get_positional() || opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";
        std::string out = " " + value_name(opt);
        if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
        return out;
    }

    std::string make_option_desc(const CLI::Option* opt) const override {
        std::string desc = opt->get_description();
        const std::string& def = opt->get_default_str();
        if (!def.empty() && opt->get_type_size() != 0 && desc.find("default") == std::string::npos)
            desc += " (default " + def + ")";
        if (opt->get_required() && !opt->get_positional()) desc += " (required)";
        return desc;
    }

    std::string make_footer(const CLI::App* app) const override {
        std::string footer = CLI::Formatter::make_footer(app);
        if (app->get_parent() != nullptr) return footer;
        return footer + (footer.empty() ? "\n" : "") +
               "Exit status: 0 done; 1 failed (an error record on stdout says what, when it is not a terminal); "
               "2 usage; 130 interrupted.\n";
    }
};

void set_formatter(CLI::App& app, const std::shared_ptr<CLI::FormatterBase>& f) {
    app.formatter(f);
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) set_formatter(*sub, f);
}

const CLI::App* deepest_parsed(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands())
        if (sub->parsed()) return deepest_parsed(*sub);
    return &app;
}
}  // namespace

void takes_command(CLI::App* cmd) {
    std::lock_guard lock(marked_mutex);
    marked().insert(cmd);
}

void use_plain_help(CLI::App& app) { set_formatter(app, std::make_shared<PlainFormatter>()); }

std::string usage_message(const CLI::App& app, const std::string& what) {
    const CLI::App* at = deepest_parsed(app);
    bool wants_subcommand = !const_cast<CLI::App*>(at)->get_subcommands([](CLI::App*) { return true; }).empty();
    auto rest = at->remaining();
    if (wants_subcommand && !rest.empty() && !rest.front().empty() && rest.front()[0] != '-')
        return "unknown subcommand '" + rest.front() + "'";
    return what;
}

std::string help_hint(const CLI::App& app) {
    std::string path;
    for (const CLI::App* at = deepest_parsed(app); at != nullptr; at = at->get_parent())
        path = at->get_name() + (path.empty() ? "" : " " + path);
    return "Try '" + path + " --help' for more.";
}

}  // namespace dsec::cli
