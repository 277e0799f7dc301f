#include "dsec/ns/idrange.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

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
