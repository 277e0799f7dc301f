#include "dsec/layer/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "dsec/sys/sha256.h"

namespace dsec::layer {

namespace {
constexpr const char* kPrefix = "sha256:";

bool is_symlink(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool is_hex(const std::string& s) { return s.find_first_not_of("0123456789abcdef") == std::string::npos; }

// "sha256:abc..." or "abc..." -> "abc..."
std::string strip_prefix(const std::string& ref) {
    return ref.rfind(kPrefix, 0) == 0 ? ref.substr(7) : ref;
}
}  // namespace

std::string now_rfc3339() { return rfc3339(int64_t(std::time(nullptr))); }

std::string rfc3339(int64_t unix_seconds) { return rfc3339_ms(unix_seconds * 1000, false); }

std::string rfc3339_ms(int64_t unix_ms, bool with_ms) {
    // The calendar by arithmetic alone (std::chrono's civil calendar): gmtime_r and
    // strftime call glibc's tzset, which opens and reads /etc/localtime (seven system
    // calls) in every process that logs, even for UTC fields.
    using namespace std::chrono;
    sys_time<milliseconds> t{milliseconds(unix_ms)};
    auto day = floor<days>(t);
    year_month_day date{day};
    hh_mm_ss time{t - day};
    char buf[64];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", int(date.year()),
                          unsigned(date.month()), unsigned(date.day()), int(time.hours().count()),
                          int(time.minutes().count()), int(time.seconds().count()));
    if (with_ms && n > 0 && size_t(n) < sizeof buf)
        std::snprintf(buf + n, sizeof buf - size_t(n), ".%03d", int(time.subseconds().count()));
    return std::string(buf) + "Z";
}

Status check_name(const std::string& name) {
    auto bad = [&](const std::string& why) {
        return fail(make_error(Code::bad_input, "invalid layer name \"" + name + "\": " + why));
    };
    if (name.empty() || name.size() > 128) return bad("must be 1 to 128 characters");
    if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
        std::string::npos)
        return bad("only letters, digits, '.', '_' and '-' are allowed");
    if (name[0] == '.' || name[0] == '-') return bad("must not start with '.' or '-'");
    if (name == "names" || name == "tmp") return bad("reserved");
    if (name.size() == 64 && is_hex(name)) return bad("looks like a digest");
    return {};
}

std::string Layer::hex() const { return strip_prefix(digest); }

json Layer::to_record(const std::string& image) const {
    json r = {{"type", "layer"}, {"v", 1},           {"digest", digest},
              {"name", name},    {"labels", labels}, {"size", size},
              {"files", files},  {"compression", compression}, {"source", source},
              {"created", created}, {"parents", parents}};
    if (config) {
        r["config"] = {{"env", config->env},   {"workdir", config->workdir}, {"entrypoint", config->entrypoint},
                       {"cmd", config->cmd}, {"user", config->user}};
    }
    if (!image.empty()) r["image"] = image;
    return r;
}

Result<Layer> Layer::from_json(const json& j) {
    try {
        Layer l;
        l.digest = j.at("digest").get<std::string>();
        l.name = j.value("name", "");
        l.labels = j.value("labels", std::map<std::string, std::string>{});
        // Whole numbers only: nlohmann's get<uint64_t>() would cast a float such as 4e48,
        // which is undefined out of range (found by the fuzzer).
        auto whole = [](const json& v) {
            return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
        };
        for (const char* key : {"size", "files"})
            if (j.contains(key) && !whole(j[key]))
                return fail(make_error(Code::bad_input, std::string("invalid layer metadata: \"") + key +
                                                            "\" is not a whole number")
                                .in_field(key));
        l.size = j.value("size", uint64_t(0));
        l.files = j.value("files", uint64_t(0));
        l.compression = j.value("compression", "");
        l.source = j.value("source", "");
        l.created = j.value("created", "");
        l.parents = j.value("parents", std::vector<std::string>{});
        if (auto c = j.find("config"); c != j.end() && c->is_object()) {
            ImageConfig cfg;
            cfg.env = c->value("env", std::vector<std::string>{});
            cfg.workdir = c->value("workdir", "");
            cfg.entrypoint = c->value("entrypoint", std::vector<std::string>{});
            cfg.cmd = c->value("cmd", std::vector<std::string>{});
            cfg.user = c->value("user", "");
            l.config = cfg;
        }
        if (l.digest.rfind(kPrefix, 0) != 0 || l.hex().size() != 64 || !is_hex(l.hex()))
            return fail(make_error(Code::bad_input, "invalid digest \"" + l.digest + "\""));
        return l;
    } catch (const nlohmann::json::exception& e) {
        return fail(make_error(Code::bad_input, std::string("invalid layer metadata: ") + e.what()));
    }
}

std::string Store::image_path(const std::string& digest) const { return dir_ + "/" + strip_prefix(digest) + ".erofs"; }
std::string Store::meta_path(const std::string& digest) const { return dir_ + "/" + strip_prefix(digest) + ".json"; }

Status Store::init() const {
    for (auto sub : {"", "/names", "/tmp"})
        if (auto r = fs::mkdir_p(dir_ + sub, 0755); !r) return r;
    return {};
}

Result<Staging> Store::staging(const std::string& prefix) const {
    if (auto r = init(); !r) return fail(r.error());
    auto dir = fs::TempDir::make(dir_ + "/tmp", prefix);
    if (!dir) return fail(dir.error());
    auto held = fs::lock_dir(dir->path());
    if (!held) return fail(held.error());
    return Staging{std::move(*held), std::move(*dir)};
}

Result<fs::Lock> Store::lock() const { return fs::lock(dir_ + "/.lock"); }

Status Store::write_meta(const Layer& layer) const {
    json meta = layer.to_record();
    meta.erase("type");
    meta.erase("v");
    return fs::atomic_write(meta_path(layer.digest), meta.dump(2) + "\n");
}

Result<Layer> Store::publish(const std::string& image_file, Layer layer) const {
    auto hex = sha256_file(image_file);
    if (!hex) return fail(hex.error());
    struct stat st;
    if (::stat(image_file.c_str(), &st) < 0) return fail(sys_error("stat", image_file));
    layer.digest = kPrefix + *hex;
    layer.size = uint64_t(st.st_size);
    if (layer.created.empty()) layer.created = now_rfc3339();

    auto held = lock();
    if (!held) return fail(held.error());
    std::string dest = image_path(layer.digest);
    if (fs::exists(dest)) {
        // Same content built before (perhaps concurrently): keep the first image, and
        // keep its metadata's earliest creation time.
        if (auto old = load(*hex); old) layer.created = old->created;
    } else {
        ::chmod(image_file.c_str(), 0444);
        if (auto r = fs::rename(image_file, dest); !r) return fail(r.error());
    }
    if (auto r = write_meta(layer); !r) return fail(r.error());
    if (!layer.name.empty()) {
        if (auto r = fs::atomic_write(dir_ + "/names/" + layer.name, layer.digest + "\n"); !r) return fail(r.error());
    }
    if (auto r = fs::sync_dir(dir_); !r) return fail(r.error());
    return layer;
}

Result<Layer> Store::load(const std::string& hex) const {
    // The store may be shared and written by others: the metadata must be a file of its
    // own (not a symlink to another layer's) and describe the digest it is named by.
    std::string meta = dir_ + "/" + hex + ".json";
    if (hex.size() != 64 || !is_hex(hex)) return fail(make_error(Code::corrupt, "not a layer digest: \"" + hex + "\"", dir_));
    if (is_symlink(meta)) return fail(make_error(Code::corrupt, "layer metadata is a symlink", meta));
    auto text = fs::read_file(meta);
    if (!text) return fail(text.error());
    json j = json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(make_error(Code::corrupt, "metadata is not JSON", meta));
    auto layer = Layer::from_json(j);
    if (!layer) return fail(std::move(layer.error()).context("reading " + meta));
    if (layer->hex() != hex)
        return fail(make_error(Code::corrupt, "metadata names " + layer->digest + ", not the digest it is stored under", meta));
    if (!fs::exists(image_path(layer->digest)))
        return fail(make_error(Code::not_found, "layer image is missing", image_path(layer->digest)));
    return layer;
}

Result<Layer> Store::resolve(const std::string& ref) const {
    // A name first: names/<ref> holds the digest.
    if (check_name(ref)) {
        auto target = fs::read_file(dir_ + "/names/" + ref);
        if (target) {
            std::string digest = *target;
            while (!digest.empty() && (digest.back() == '\n' || digest.back() == ' ')) digest.pop_back();
            auto layer = load(strip_prefix(digest));
            if (!layer) return fail(std::move(layer.error()).context("layer \"" + ref + "\""));
            return layer;
        }
        // Not a name is one thing; a store that cannot be read (a shared filesystem gone
        // away) is another, and says so.
        if (target.error().err != ENOENT) return fail(std::move(target.error()).context("layer \"" + ref + "\""));
    }
    std::string hex = strip_prefix(ref);
    if (hex.size() >= 4 && hex.size() <= 64 && is_hex(hex)) {
        auto entries = fs::list_dir(dir_);
        if (!entries) return fail(entries.error());
        std::string match;
        for (auto& e : *entries) {
            if (e.size() != 69 || e.substr(64) != ".json" || e.rfind(hex, 0) != 0) continue;
            if (!match.empty())
                return fail(make_error(Code::ambiguous, "digest prefix \"" + ref + "\" matches more than one layer"));
            match = e.substr(0, 64);
        }
        if (!match.empty()) return load(match);
    }
    return fail(make_error(Code::not_found, "no layer named or digested \"" + ref + "\" in " + dir_));
}

Result<std::vector<Layer>> Store::all() const {
    auto entries = fs::list_dir(dir_);
    if (!entries) return fail(entries.error());
    std::vector<Layer> out;
    for (auto& e : *entries) {
        if (e.size() != 69 || e.substr(64) != ".json" || !is_hex(e.substr(0, 64))) continue;
        auto layer = load(e.substr(0, 64));
        if (layer) out.push_back(std::move(*layer));
    }
    return out;
}

Result<std::vector<Layer>> Store::with_label(const std::string& key, const std::string& value) const {
    auto every = all();
    if (!every) return fail(every.error());
    std::vector<Layer> out;
    for (auto& l : *every) {
        auto it = l.labels.find(key);
        if (it != l.labels.end() && it->second == value) out.push_back(l);
    }
    return out;
}

Result<std::map<std::string, std::string>> Store::names() const {
    auto entries = fs::list_dir(dir_ + "/names");
    if (!entries) return fail(entries.error());
    std::map<std::string, std::string> out;
    for (auto& n : *entries) {
        if (!check_name(n)) continue;  // temp files of atomic writes
        auto t = fs::read_file(dir_ + "/names/" + n);
        if (!t) continue;
        std::string d = *t;
        while (!d.empty() && (d.back() == '\n' || d.back() == ' ')) d.pop_back();
        out[n] = d;
    }
    return out;
}

Status Store::tag(const std::string& name, const std::string& digest) const {
    if (auto r = check_name(name); !r) return r;
    if (auto r = init(); !r) return r;
    auto held = lock();
    if (!held) return fail(held.error());
    return fs::atomic_write(dir_ + "/names/" + name, digest + "\n");
}

Status Store::untag(const std::string& name) const {
    auto held = lock();
    if (!held) return fail(held.error());
    std::string path = dir_ + "/names/" + name;
    if (!check_name(name) || ::unlink(path.c_str()) < 0)
        return fail(make_error(Code::not_found, "\"" + name + "\" is not a layer name"));
    return fs::sync_dir(dir_ + "/names");
}

Status Store::remove_locked(const std::string& digest, const std::map<std::string, std::string>& names) const {
    for (auto& [n, d] : names)
        if (d == digest && ::unlink((dir_ + "/names/" + n).c_str()) < 0 && errno != ENOENT)
            return fail(sys_error("unlink", dir_ + "/names/" + n));
    // Metadata first: a layer without metadata is invisible, and gc removes the image.
    if (::unlink(meta_path(digest).c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", meta_path(digest)));
    if (::unlink(image_path(digest).c_str()) < 0 && errno != ENOENT)
        return fail(sys_error("unlink", image_path(digest)));
    return fs::sync_dir(dir_);
}

Status Store::remove(const Layer& layer) const {
    auto held = lock();
    if (!held) return fail(held.error());
    auto all_names = names();
    if (!all_names) return fail(all_names.error());
    return remove_locked(layer.digest, *all_names);
}

Result<Store::Untagged> Store::rm_name(const std::string& name, int users) const {
    auto held = lock();
    if (!held) return fail(held.error());
    auto all_names = names();
    if (!all_names) return fail(all_names.error());
    auto it = all_names->find(name);
    if (it == all_names->end()) return fail(make_error(Code::not_found, "\"" + name + "\" is not a layer name"));
    Untagged out{it->second, false, {}};
    for (auto& [n, d] : *all_names)
        if (d == out.digest && n != name) out.names_left.push_back(n);
    if (out.names_left.empty()) {
        if (users > 0)
            return fail(make_error(Code::busy, "\"" + name + "\" is the last name of a layer that " + std::to_string(users) +
                                               " live sandbox(es) use; destroy them first (or rm --name-only)"));
        out.layer_removed = true;
        if (auto r = remove_locked(out.digest, *all_names); !r) return fail(r.error());
        return out;
    }
    if (::unlink((dir_ + "/names/" + name).c_str()) < 0) return fail(sys_error("unlink", dir_ + "/names/" + name));
    if (auto r = fs::sync_dir(dir_ + "/names"); !r) return fail(r.error());
    return out;
}

}  // namespace dsec::layer
