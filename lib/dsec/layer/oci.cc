#include "dsec/layer/oci.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dsec/layer/safe_tree.h"

namespace dsec::layer {

using nlohmann::json;

namespace {
// Manifests and configs are small; anything bigger is not one.
constexpr size_t kMaxJson = size_t(4) << 20;

Result<json> read_json(int dirfd, const std::string& path, const std::string& where) {
    auto fd = open_beneath(dirfd, path, where);
    if (!fd) return fail(fd.error());
    std::string text;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd->get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("read", where + "/" + path));
        if (n == 0) break;
        text.append(buf, size_t(n));
        if (text.size() > kMaxJson) return fail(bad_input(path + " is larger than a manifest can be", where));
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return fail(bad_input(path + " is not valid JSON", where));
    return j;
}

// A string field of an object; "" when `j` is not an object or the field not a string
// (json::value() would throw on either: an image is hostile input).
std::string text(const json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> strings(const json& j, const char* key) {
    std::vector<std::string> out;
    if (auto it = j.find(key); it != j.end() && it->is_array())
        for (auto& s : *it)
            if (s.is_string()) out.push_back(s.get<std::string>());
    return out;
}

Result<ImageConfig> read_config(int dirfd, const std::string& path, const std::string& where) {
    auto j = read_json(dirfd, path, where);
    if (!j) return fail(j.error());
    if (!j->is_object()) return fail(bad_input(path + " is not an image config", where));
    auto it = j->find("config");
    if (it == j->end() || it->is_null()) return ImageConfig{};
    return parse_image_config(*it);
}

Result<ImageManifest> read_oci(int dirfd, const std::string& where, const std::string& platform) {
    auto index = read_json(dirfd, "index.json", where);
    if (!index) return fail(index.error());
    auto desc = pick_manifest(*index, platform);
    if (!desc) return fail(desc.error());
    // A nested index (a multi-platform image) is followed one level down.
    for (int depth = 0;; depth++) {
        auto path = blob_path(text(*desc, "digest"));
        if (!path) return fail(path.error());
        auto m = read_json(dirfd, *path, where);
        if (!m) return fail(m.error());
        if (m->contains("manifests") && depth < 2) {
            desc = pick_manifest(*m, platform);
            if (!desc) return fail(desc.error());
            continue;
        }
        if (!m->is_object() || !m->contains("layers") || !(*m)["layers"].is_array() || !m->contains("config"))
            return fail(bad_input(*path + " is not an image manifest", where));
        ImageManifest out;
        out.kind = "oci";
        auto cfg_path = blob_path(text((*m)["config"], "digest"));
        if (!cfg_path) return fail(cfg_path.error());
        auto cfg = read_config(dirfd, *cfg_path, where);
        if (!cfg) return fail(cfg.error());
        out.config = *cfg;
        for (auto& l : (*m)["layers"]) {
            std::string digest = text(l, "digest");
            auto lp = blob_path(digest);
            if (!lp) return fail(lp.error());
            out.layers.push_back({*lp, digest.substr(7)});
        }
        return out;
    }
}

Result<ImageManifest> read_docker(int dirfd, const std::string& where) {
    auto manifest = read_json(dirfd, "manifest.json", where);
    if (!manifest) return fail(manifest.error());
    if (!manifest->is_array() || manifest->empty() || !(*manifest)[0].is_object())
        return fail(bad_input("manifest.json lists no image", where));
    const json& m = (*manifest)[0];
    ImageManifest out;
    out.kind = "docker";
    std::string cfg_path = text(m, "Config");
    if (cfg_path.empty()) return fail(bad_input("manifest.json has no Config", where));
    auto cfg = read_config(dirfd, cfg_path, where);
    if (!cfg) return fail(cfg.error());
    out.config = *cfg;
    for (auto& p : strings(m, "Layers")) {
        // Newer docker names layers by digest (blobs/sha256/<hex>): check those too.
        std::string hex;
        if (p.rfind("blobs/sha256/", 0) == 0 && p.size() == 13 + 64) hex = p.substr(13);
        out.layers.push_back({p, hex});
    }
    return out;
}
}  // namespace

Result<std::string> blob_path(const std::string& digest) {
    if (digest.rfind("sha256:", 0) != 0 || digest.size() != 7 + 64 ||
        digest.find_first_not_of("0123456789abcdef", 7) != std::string::npos)
        return fail(bad_input("unsupported or malformed blob digest \"" + digest + "\"", {}));
    return "blobs/sha256/" + digest.substr(7);
}

Result<json> pick_manifest(const json& index, const std::string& platform) {
    auto it = index.find("manifests");
    if (!index.is_object() || it == index.end() || !it->is_array() || it->empty())
        return fail(bad_input("image index lists no manifest", {}));
    if (platform.empty()) {
        if (!(*it)[0].is_object()) return fail(bad_input("image index lists a manifest that is not an object", {}));
        return (*it)[0];
    }
    for (auto& d : *it) {
        if (!d.is_object()) continue;
        const json& p = d.contains("platform") ? d["platform"] : json::object();
        std::string name = text(p, "os") + "/" + text(p, "architecture");
        if (p.is_object() && p.contains("variant")) {
            if (platform == name + "/" + text(p, "variant")) return d;
        }
        if (platform == name) return d;
    }
    return fail(make_error(Code::not_found, "no manifest for platform " + platform));
}

Result<ImageConfig> parse_image_config(const json& c) {
    if (!c.is_object()) return fail(bad_input("image config is not an object", {}));
    ImageConfig out;
    out.env = strings(c, "Env");
    out.entrypoint = strings(c, "Entrypoint");
    out.cmd = strings(c, "Cmd");
    if (auto w = c.find("WorkingDir"); w != c.end() && w->is_string()) out.workdir = w->get<std::string>();
    if (auto u = c.find("User"); u != c.end() && u->is_string()) out.user = u->get<std::string>();
    return out;
}

Result<Fd> open_beneath(int dirfd, const std::string& path, const std::string& where) {
    auto clean = clean_path(path);
    if (!clean || clean->empty()) return fail(bad_input("image refers to a path outside itself: \"" + path + "\"", where));
    struct open_how how = {};
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    long fd = ::syscall(SYS_openat2, dirfd, clean->c_str(), &how, sizeof how);
    if (fd >= 0) return Fd(int(fd));
    if (errno == EXDEV || errno == ELOOP) return fail(bad_input("\"" + path + "\" leads outside the image", where));
    if (errno == ENOENT) return fail(make_error(Code::not_found, "image has no \"" + path + "\"", where));
    return fail(sys_error("open", where + "/" + path));
}

Result<ImageManifest> read_image_manifest(int dirfd, const std::string& where, const std::string& platform) {
    bool oci = SafeTree::type_at(dirfd, "index.json") != 0;
    bool docker = SafeTree::type_at(dirfd, "manifest.json") != 0;
    // docker save writes both since version 25; its manifest.json is the simpler path,
    // unless a platform is asked for.
    if (docker && (platform.empty() || !oci)) return read_docker(dirfd, where);
    if (oci) return read_oci(dirfd, where, platform);
    return fail(bad_input("neither an OCI image layout (index.json) nor a docker save archive (manifest.json)", where));
}

}  // namespace dsec::layer
