#include "dsec/mount/rootfs.h"

namespace dsec::mount {

nlohmann::json Rootfs::to_record() const {
    nlohmann::json ls = nlohmann::json::array();
    for (auto& l : layers) ls.push_back({{"digest", l.digest}, {"name", l.name}, {"path", l.path}});
    return {{"type", "rootfs"}, {"v", 1},         {"id", id},     {"layers", ls},
            {"lowerdirs", lowerdirs}, {"upper", upper}, {"work", work}, {"config", config}};
}

Result<Rootfs> Rootfs::from_record(const nlohmann::json& j) {
    auto bad = [](const std::string& what) {
        return fail(make_error(Code::bad_input, "rootfs record: " + what));
    };
    if (!j.is_object()) return bad("not an object");
    auto str = [&](const char* key, std::string& out, bool required) -> bool {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return !required;
        if (!it->is_string()) return false;
        out = it->get<std::string>();
        return true;
    };
    Rootfs r;
    if (!str("id", r.id, true) || r.id.empty()) return bad("missing or invalid \"id\"");
    if (!str("upper", r.upper, false)) return bad("\"upper\" is not a string");
    if (!str("work", r.work, false)) return bad("\"work\" is not a string");
    auto lowers = j.find("lowerdirs");
    if (lowers == j.end() || !lowers->is_array() || lowers->empty()) return bad("missing or empty \"lowerdirs\"");
    for (auto& d : *lowers) {
        if (!d.is_string()) return bad("\"lowerdirs\" holds a non-string");
        r.lowerdirs.push_back(d.get<std::string>());
    }
    if (auto ls = j.find("layers"); ls != j.end()) {
        if (!ls->is_array()) return bad("\"layers\" is not an array");
        for (auto& l : *ls) {
            if (!l.is_object() || !l.contains("digest") || !l["digest"].is_string())
                return bad("a layer without a \"digest\"");
            auto text = [&](const char* key) {
                auto it = l.find(key);
                return it != l.end() && it->is_string() ? it->get<std::string>() : std::string();
            };
            r.layers.push_back({l["digest"].get<std::string>(), text("name"), text("path")});
        }
    }
    if (auto c = j.find("config"); c != j.end() && c->is_object()) r.config = *c;
    return r;
}

}  // namespace dsec::mount
