#include "dsec/sandbox/pool.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "dsec/sandbox/sandbox.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/id.h"
#include "dsec/sys/process.h"
#include "dsec/sys/sha256.h"

namespace dsec::sandbox::pool {

using nlohmann::json;

namespace {

constexpr const char* kConfigFile = "pool.json";
constexpr const char* kErrorFile = "last-error.json";

// An entry's name, taken apart.
enum class Kind { ready, making, claimed, other };
struct Entry {
    Kind kind = Kind::other;
    std::string id;
    int pid = 0;
    unsigned long long start = 0;
    bool owner_alive() const { return proc::process_alive(pid, start); }
};

std::string suffix_of(int pid, unsigned long long start) {
    std::string s(1, '.');
    s += std::to_string(pid);
    s += '.';
    s += std::to_string(start);
    return s;
}

// This process, as its entries name it (read again in a forked child).
std::string owner_suffix() {
    static int pid = 0;
    static std::string suffix;
    if (pid != ::getpid()) {
        pid = ::getpid();
        suffix = suffix_of(pid, proc::process_start(pid));
    }
    return suffix;
}

std::string making_name(const std::string& id) { return ".making." + id + owner_suffix(); }
std::string claimed_name(const std::string& id) { return ".claimed." + id + owner_suffix(); }

bool all_digits(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

Entry parse_entry(const std::string& name) {
    Entry e;
    if (name.empty() || name == kConfigFile || name == kErrorFile) return e;
    if (name[0] != '.') {
        if (check_id(name)) e = {Kind::ready, name};
        return e;
    }
    // .making.<id>.<pid>.<start> / .claimed.<id>.<pid>.<start>; ids hold no dots.
    std::vector<std::string> parts;
    size_t from = 1;
    for (size_t dot; (dot = name.find('.', from)) != std::string::npos; from = dot + 1)
        parts.push_back(name.substr(from, dot - from));
    parts.push_back(name.substr(from));
    if (parts.size() != 4 || !check_id(parts[1]) || !all_digits(parts[2]) || !all_digits(parts[3]) ||
        parts[2].size() > 9 || parts[3].size() > 19)
        return e;
    if (parts[0] == "making") e.kind = Kind::making;
    else if (parts[0] == "claimed") e.kind = Kind::claimed;
    else return e;
    e.id = parts[1];
    e.pid = std::stoi(parts[2]);
    e.start = std::stoull(parts[3]);
    return e;
}

struct Loaded {
    size_t size = 0;
    json config = json::object();
};

Result<Loaded> load_config(const Pool& pool) {
    auto text = fs::read_file(pool.dir + "/" + kConfigFile);
    if (!text) {
        if (text.error().code == Code::not_found) return Loaded{};
        return fail(text.error());
    }
    auto j = json::parse(*text, nullptr, false);
    if (!j.is_object() || !j.contains("size") || !j["size"].is_number_unsigned())
        return fail(make_error(Code::corrupt, "pool file does not parse", pool.dir + "/" + kConfigFile));
    Loaded l;
    l.size = j["size"].get<size_t>();
    if (j.contains("config") && j["config"].is_object()) l.config = j["config"];
    return l;
}

Status save_config(const Pool& pool, size_t size, const json& config) {
    return fs::atomic_write(pool.dir + "/" + kConfigFile, json{{"size", size}, {"config", config}}.dump() + "\n", 0600);
}

bool is_gone(const Error& e) { return e.code == Code::not_found; }

Result<fs::Lock> lock_pool(const Pool& pool) {
    auto l = fs::lock_dir(pool.dir);
    if (!l && is_gone(l.error()))
        return fail(make_error(Code::not_found, "no pool \"" + pool.key + "\"", pool.dir));
    return l;
}

// A ready sandbox that is still fit to be drawn: its state says running and its init
// is the process it started.
bool fit(const Paths& paths, const std::string& id) {
    auto st = load(paths, id);
    return st && st->lifecycle == Lifecycle::running && init_alive(*st);
}

void unlink_entry(const Pool& pool, const std::string& name) { ::unlink((pool.dir + "/" + name).c_str()); }

Status destroy_quietly(const Paths& paths, const std::string& id) {
    auto d = destroy(paths, id, Missing::ok);
    if (!d) return fail(d.error());
    return {};
}

// With the pool's lock held: destroys what crashed processes left and ready sandboxes
// that died, and removes a drained pool with nothing left in it.
Result<std::vector<std::string>> sweep_locked(const Paths& paths, const Pool& pool) {
    auto names = fs::list_dir(pool.dir);
    if (!names) return fail(names.error());
    std::vector<std::string> swept;
    size_t left = 0;
    for (auto& name : *names) {
        Entry e = parse_entry(name);
        bool dead = false;
        if (e.kind == Kind::making || e.kind == Kind::claimed) dead = !e.owner_alive();
        else if (e.kind == Kind::ready) dead = !fit(paths, e.id);
        if (!dead) {
            if (e.kind != Kind::other) left++;
            continue;
        }
        if (auto d = destroy_quietly(paths, e.id); !d) return fail(d.error());
        unlink_entry(pool, name);
        swept.push_back(e.id);
    }
    auto conf = load_config(pool);
    if (conf && conf->size == 0 && left == 0) {
        unlink_entry(pool, kConfigFile);
        ::rmdir(pool.dir.c_str());  // stays when something else is in it
    }
    return swept;
}

}  // namespace

std::string pools_dir(const Paths& paths) { return paths.run + "/pools"; }

Pool at(const Paths& paths, const std::string& key) { return {key, pools_dir(paths) + "/" + key}; }

bool valid_key(const std::string& key) {
    return key.size() == 16 && key.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string key_of(const json& config) {
    Sha256 h;
    h.update(config.dump());
    return h.hex().substr(0, 16);
}

json Census::to_record(const std::string& key) const {
    json r = {{"type", "pool"},       {"key", key},           {"size", size},     {"ready", ready.size()},
              {"making", making.size()}, {"claimed", claimed.size()}, {"stale", stale.size()}, {"config", config}};
    if (!last_error.is_null()) r["last_error"] = last_error;
    return r;
}

Result<Census> census(const Pool& pool) {
    struct stat st;
    if (::stat(pool.dir.c_str(), &st) < 0)
        return fail(make_error(Code::not_found, "no pool \"" + pool.key + "\"", pool.dir));
    auto conf = load_config(pool);
    if (!conf) return fail(conf.error());
    auto names = fs::list_dir(pool.dir);
    if (!names) return fail(names.error());
    Census c;
    c.size = conf->size;
    c.config = conf->config;
    if (auto e = fs::read_file(pool.dir + "/" + kErrorFile); e) {
        auto j = json::parse(*e, nullptr, false);
        if (j.is_object()) c.last_error = std::move(j);
    }
    for (auto& name : *names) {
        Entry e = parse_entry(name);
        if (e.kind == Kind::ready) c.ready.push_back(e.id);
        else if ((e.kind == Kind::making || e.kind == Kind::claimed) && !e.owner_alive()) c.stale.push_back(e.id);
        else if (e.kind == Kind::making) c.making.push_back(e.id);
        else if (e.kind == Kind::claimed) c.claimed.push_back(e.id);
    }
    return c;
}

Result<std::vector<std::string>> keys(const Paths& paths) {
    auto names = fs::list_dir(pools_dir(paths));
    if (!names) return fail(names.error());
    std::vector<std::string> out;
    for (auto& n : *names)
        if (valid_key(n)) out.push_back(n);
    return out;
}

Status configure(const Pool& pool, size_t size, const json& config) {
    // The common case, every run --pool of a loop: nothing to change, no lock, no write.
    if (auto now = load_config(pool); now && now->size == size && now->config == config) return {};
    if (auto r = fs::mkdir_p(pool.dir, 0700); !r) return r;
    auto lock = lock_pool(pool);
    if (!lock) return fail(lock.error());
    return save_config(pool, size, config);
}

Result<std::optional<std::string>> claim(const Paths& paths, const Pool& pool, std::vector<std::string>& dead) {
    auto names = fs::list_dir(pool.dir);
    if (!names) return fail(names.error());
    for (auto& name : *names) {
        Entry e = parse_entry(name);
        if (e.kind != Kind::ready) continue;
        std::string from = pool.dir + "/" + name, to = pool.dir + "/" + claimed_name(e.id);
        if (::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) < 0) {
            if (errno == ENOENT) continue;  // another run drew it first
            return fail(sys_error("rename", from));
        }
        if (fit(paths, e.id)) return std::optional<std::string>(e.id);
        dead.push_back(e.id);
    }
    return std::optional<std::string>();
}

void release(const Pool& pool, const std::string& id) { unlink_entry(pool, claimed_name(id)); }

Status adopt(const Pool& pool, const std::string& id) {
    std::string path = pool.dir + "/" + claimed_name(id);
    Fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!f) return fail(sys_error("create", path));
    return {};
}

Status hand_over(const Pool& pool, const std::string& id, int to_pid, unsigned long long to_start) {
    std::string from = pool.dir + "/" + claimed_name(id);
    std::string to = pool.dir + "/.claimed." + id + suffix_of(to_pid, to_start);
    if (::rename(from.c_str(), to.c_str()) < 0) return fail(sys_error("rename", from));
    return {};
}

void note_error(const Pool& pool, const Error& e) {
    json rec = e.to_record();
    rec["at"] = now_unix();
    (void)fs::atomic_write(pool.dir + "/" + kErrorFile, rec.dump() + "\n", 0600);
}

Result<std::vector<std::string>> sweep(const Paths& paths, const Pool& pool) {
    auto lock = lock_pool(pool);
    if (!lock) return fail(lock.error());
    return sweep_locked(paths, pool);
}

Result<size_t> fill(const Paths& paths, const Pool& pool, const Make& make,
                    const std::function<void(size_t, size_t)>& progress) {
    std::vector<std::string> reserved;
    {
        auto lock = lock_pool(pool);
        if (!lock) return fail(lock.error());
        if (auto s = sweep_locked(paths, pool); !s) return fail(s.error());
        auto c = census(pool);
        if (!c) return fail(c.error());
        size_t have = c->ready.size() + c->making.size();
        for (size_t i = have; i < c->size; i++) {
            std::string id = random_hex(kSandboxIdBytes);
            std::string path = pool.dir + "/" + making_name(id);
            Fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
            if (!f) return fail(sys_error("create", path));
            reserved.push_back(id);
        }
    }
    size_t made = 0;
    for (size_t i = 0; i < reserved.size(); i++) {
        const std::string& id = reserved[i];
        if (auto s = make(id); !s) {
            (void)destroy_quietly(paths, id);
            for (size_t j = i; j < reserved.size(); j++) unlink_entry(pool, making_name(reserved[j]));
            return fail(s.error());
        }
        // Published under the lock, so that a drain that set the size to 0 meanwhile sees
        // either the ready entry (and destroys it) or none (and this destroys it).
        auto lock = lock_pool(pool);
        auto conf = lock ? load_config(pool) : Result<Loaded>(fail(lock.error()));
        std::string from = pool.dir + "/" + making_name(id), to = pool.dir + "/" + id;
        if (!conf || conf->size == 0 || ::rename(from.c_str(), to.c_str()) < 0) {
            (void)destroy_quietly(paths, id);
            unlink_entry(pool, making_name(id));
            continue;
        }
        made++;
        if (progress) progress(made, reserved.size());
    }
    return made;
}

Result<std::vector<std::string>> drain(const Paths& paths, const Pool& pool, unsigned wait_ms) {
    std::vector<std::string> destroyed;
    auto destroy_ready = [&]() -> Status {
        auto lock = lock_pool(pool);
        if (!lock) return fail(lock.error());
        auto conf = load_config(pool);
        if (!conf) return fail(conf.error());
        if (auto r = save_config(pool, 0, conf->config); !r) return r;
        std::vector<std::string> dead;
        for (;;) {
            auto id = claim(paths, pool, dead);
            if (!id) return fail(id.error());
            if (!*id) break;
            dead.push_back(**id);
        }
        for (auto& id : dead) {
            if (auto d = destroy_quietly(paths, id); !d) return d;
            release(pool, id);
            destroyed.push_back(id);
        }
        return {};
    };
    if (auto r = destroy_ready(); !r) return fail(r.error());
    // Sandboxes being made are destroyed by their makers when they find the size at 0.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        auto c = census(pool);
        if (!c) return fail(c.error());
        if (c->making.empty()) break;
        if (std::chrono::steady_clock::now() >= until)
            return fail(make_error(Code::busy, std::to_string(c->making.size()) + " sandbox(es) of pool \"" + pool.key +
                                                   "\" still being made", pool.dir));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (auto r = destroy_ready(); !r) return fail(r.error());
    auto s = sweep(paths, pool);
    if (!s && !is_gone(s.error())) return fail(s.error());
    if (s) destroyed.insert(destroyed.end(), s->begin(), s->end());
    return destroyed;
}

}  // namespace dsec::sandbox::pool
