#include "dsec/snapshot/scrub.h"

#include <algorithm>

#include "dsec/layer/safe_tree.h"
#include "dsec/sys/fs.h"

namespace dsec::snapshot {

Result<std::vector<std::string>> scrub_paths(const nlohmann::json& policy) {
    std::vector<std::string> out;
    if (!policy.is_object()) return fail(make_error(Code::bad_input, "the policy is not a JSON object"));
    auto it = policy.find("scrub");
    if (it == policy.end()) return out;
    if (!it->is_array()) return fail(make_error(Code::bad_input, "the policy's \"scrub\" is not an array of paths"));
    for (auto& p : *it) {
        if (!p.is_string() || p.get<std::string>().empty() || p.get<std::string>()[0] != '/')
            return fail(make_error(Code::bad_input, "a \"scrub\" entry is not an absolute path: " + p.dump()));
        const std::string& text = p.get_ref<const std::string&>();
        auto first = text.find_first_not_of('/');
        auto clean = layer::clean_path(first == std::string::npos ? "" : text.substr(first));
        if (!clean) return fail(make_error(Code::bad_input, "bad \"scrub\" path: " + clean.error().detail(), p.get<std::string>()));
        if (clean->empty()) return fail(make_error(Code::bad_input, "\"scrub\" cannot name the root itself"));
        out.push_back(*clean);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Result<std::vector<std::string>> scrub_paths_from_file(const std::string& path) {
    auto text = fs::read_file(path);
    if (!text) {
        if (text.error().err == ENOENT) return fail(make_error(Code::not_found, "policy file not found", path));
        return fail(text.error());
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(make_error(Code::bad_input, "the policy file is not JSON", path));
    auto paths = scrub_paths(j);
    if (!paths && paths.error().path.empty()) paths.error().path = path;
    return paths;
}

}  // namespace dsec::snapshot
