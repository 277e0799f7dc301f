#include "dsec/ns/idrange.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "dsec/sys/fs.h"

namespace dsec::ns {

namespace {
std::string dir_of(const std::string& run_dir) { return run_dir + "/userns"; }
std::string slot_path(const std::string& run_dir, uint32_t slot) { return dir_of(run_dir) + "/" + std::to_string(slot); }

// Creates the slot file holding `owner`; false when it exists already.
Result<bool> take(const std::string& path, const std::string& owner) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) {
        if (errno == EEXIST) return false;
        return fail(sys_error("create", path));
    }
    if (auto r = fs::write_all(fd.get(), owner); !r) return fail(r.error());
    return true;
}
}  // namespace

std::string IdMap::text() const {
    std::string out;
    for (const Line& l : lines)
        out += std::to_string(l.inside) + " " + std::to_string(l.outside) + " " + std::to_string(l.count) + "\n";
    return out;
}

std::optional<uint32_t> IdMap::inside(uint32_t host) const {
    for (const Line& l : lines)
        if (host >= l.outside && host - l.outside < l.count) return l.inside + (host - l.outside);
    return std::nullopt;
}

std::optional<uint32_t> IdMap::outside(uint32_t id) const {
    for (const Line& l : lines)
        if (id >= l.inside && id - l.inside < l.count) return l.outside + (id - l.inside);
    return std::nullopt;
}

IdMap sandbox_id_map(uint32_t first, uint32_t count) {
    constexpr uint32_t kTail = 128;
    if (count <= kTail) return IdMap{{{0, first, count}}};
    uint32_t r = 1 + (first / kIdsPerSandbox) % (kTail - 1);
    uint32_t k = count - kTail;
    return IdMap{{{0, first + r, k}, {k, first, r}, {k + r, first + r + k, kTail - r}}};
}

Result<IdMap> read_id_map(int pid, const char* file) {
    std::string path = "/proc/" + std::to_string(pid) + "/" + file;
    auto text = fs::read_file(path);
    if (!text) return fail(text.error());
    IdMap map;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        IdMap::Line l;
        if (!(fields >> l.inside >> l.outside >> l.count))
            return fail(make_error(Code::corrupt, "unreadable line \"" + line + "\"", path));
        map.lines.push_back(l);
    }
    return map;
}

Result<IdPool> pool_from_env() {
    IdPool pool;
    const char* env = std::getenv("DSEC_USERNS_POOL");
    if (!env || !*env) return pool;
    char* end = nullptr;
    unsigned long long first = std::strtoull(env, &end, 10);
    unsigned long long slots = (end && *end == ':') ? std::strtoull(end + 1, &end, 10) : 0;
    if (!end || *end || slots == 0 || first == 0 || first + slots * kIdsPerSandbox > 0xffffffffULL)
        return fail(make_error(Code::usage, "DSEC_USERNS_POOL must be FIRST:SLOTS with FIRST > 0 and FIRST + SLOTS * 65536 "
                                        "below 2^32, got \"" + std::string(env) + "\""));
    pool.first = uint32_t(first);
    pool.slots = uint32_t(slots);
    return pool;
}

Result<IdRange> claim_ids(const std::string& run_dir, const IdPool& pool, const std::string& owner,
                          bool (*alive)(const std::string&, const std::string&)) {
    if (auto r = fs::mkdir_p(dir_of(run_dir), 0700); !r) return fail(r.error());
    auto held = fs::lock(dir_of(run_dir) + "/.lock");
    if (!held) return fail(held.error());
    // Probing from a random slot keeps the common case to one or two creates however
    // many sandboxes run.
    uint32_t start = 0;
    if (::getrandom(&start, sizeof start, 0) != sizeof start) start = uint32_t(::getpid());
    for (uint32_t i = 0; i < pool.slots; i++) {
        uint32_t slot = (start + i) % pool.slots;
        std::string path = slot_path(run_dir, slot);
        auto took = take(path, owner);
        if (!took) return fail(took.error());
        if (!*took) {
            auto holder = fs::read_file(path);
            // Empty: a claim killed between creating the file and writing its owner (we
            // hold the lock it held, so it is not being written now).
            if (!holder || (!holder->empty() && alive(run_dir, *holder))) continue;
            // Its sandbox is gone without releasing it (a crash): reuse it.
            if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", path));
            took = take(path, owner);
            if (!took) return fail(took.error());
            if (!*took) continue;
        }
        return IdRange{slot, pool.first + slot * kIdsPerSandbox};
    }
    return fail(make_error(Code::exhausted, "every one of the " + std::to_string(pool.slots) +
                                            " user namespace id ranges is in use (DSEC_USERNS_POOL)"));
}

Status release_ids(const std::string& run_dir, uint32_t slot, const std::string& owner) {
    std::string path = slot_path(run_dir, slot);
    auto holder = fs::read_file(path);
    if (!holder) return holder.error().err == ENOENT || holder.error().code == Code::not_found ? Status{} : fail(holder.error());
    if (*holder != owner) return {};
    if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", path));
    return {};
}

}  // namespace dsec::ns
