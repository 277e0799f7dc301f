#include "dsec/net/egress.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "dsec/net/egress.skel.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::net {

namespace {
// libbpf reports through its own printer; its errors come back as values here.
int quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

Error bpf_error(int err, const std::string& op, const std::string& path) {
    Error e = errno_error(err < 0 ? -err : err, op, path);
    e.code = Code::bpf;
    return e;
}

constexpr const char* kLinks[] = {"connect4", "connect6", "sendmsg4", "sendmsg6", "sock_create"};
constexpr bpf_attach_type kAttachTypes[] = {BPF_CGROUP_INET4_CONNECT, BPF_CGROUP_INET6_CONNECT,
                                            BPF_CGROUP_UDP4_SENDMSG, BPF_CGROUP_UDP6_SENDMSG,
                                            BPF_CGROUP_INET_SOCK_CREATE};
constexpr const char* kSharedMaps[] = {"rules", "slots", "denials"};
// Under a sandbox's pin directory: the slots map pinned again, named after its cgroup id,
// so that its key is found after its cgroup is gone.
constexpr std::string_view kCgroupPin = "cgroup-";

// Sandboxes with egress per run directory: DSEC_EGRESS_SLOTS, else 1024 (each slot is
// DSEC_EGRESS_SLOT rules of 40 bytes, about 20 KiB, allocated when the programs load).
uint32_t slot_count() {
    const char* env = std::getenv("DSEC_EGRESS_SLOTS");
    unsigned long n = env && *env ? std::strtoul(env, nullptr, 10) : 0;
    return n >= 1 && n <= 65536 ? uint32_t(n) : 1024;
}

Result<Fd> open_pin(const std::string& path) {
    int fd = ::bpf_obj_get(path.c_str());
    if (fd < 0) {
        if (errno == ENOENT) return fail(make_error(Code::not_found, "no egress programs or rules pinned", path));
        return fail(bpf_error(errno, "bpf_obj_get", path));
    }
    return Fd(fd);
}

// A cgroup's id on the unified tree: its directory's inode number.
Result<uint64_t> cgroup_id(const std::string& dir) {
    struct stat st;
    if (::stat(dir.c_str(), &st) < 0) return fail(sys_error("stat", dir));
    return uint64_t(st.st_ino);
}

// The depth of a cgroup directory below the unified tree's root (its mount point).
Result<uint32_t> cgroup_level(const std::string& dir) {
    uint32_t level = 0;
    std::string at = dir;
    for (;;) {
        struct statfs here, up;
        std::string parent = at.substr(0, at.rfind('/'));
        if (parent.empty() || ::statfs(at.c_str(), &here) < 0 || ::statfs(parent.c_str(), &up) < 0)
            return fail(sys_error("statfs", at));
        if (up.f_type != CGROUP2_SUPER_MAGIC) return level;
        level++;
        at = parent;
    }
}

// Writes `table` into the slot starting at `base` of the rule array.
Status write_table(int rules_fd, uint32_t base, const RuleTable& table, bool switch_over, const std::string& where) {
    uint32_t at = base + DSEC_EGRESS_CONFIG;
    dsec_egress_rule slot{};
    dsec_egress_config cfg{};
    if (switch_over) {
        if (::bpf_map_lookup_elem(rules_fd, &at, &slot) < 0) return fail(bpf_error(errno, "bpf_map_lookup_elem", where));
        std::memcpy(&cfg, &slot, sizeof cfg);
    }
    uint32_t next = switch_over ? (cfg.live ^ 1u) & 1u : 0;
    for (uint32_t i = 0; i < table.size(); i++) {
        uint32_t key = base + next * DSEC_EGRESS_MAX_RULES + i;
        if (::bpf_map_update_elem(rules_fd, &key, &table[i], BPF_ANY) < 0)
            return fail(bpf_error(errno, "bpf_map_update_elem", where));
    }
    // The new table's count first (the programs read only the live one's), then the
    // switch: the second update changes only the `live` word.
    cfg.count[next] = uint32_t(table.size());
    std::memcpy(&slot, &cfg, sizeof cfg);
    if (::bpf_map_update_elem(rules_fd, &at, &slot, BPF_ANY) < 0) return fail(bpf_error(errno, "bpf_map_update_elem", where));
    cfg.live = next;
    std::memcpy(&slot, &cfg, sizeof cfg);
    if (::bpf_map_update_elem(rules_fd, &at, &slot, BPF_ANY) < 0) return fail(bpf_error(errno, "bpf_map_update_elem", where));
    return {};
}

// Whether the pinned links are attached to the cgroup `parent` (not to one removed and
// made again since, whose links would filter nothing any more).
bool links_on(const std::string& shared, uint64_t parent) {
    for (const char* name : kLinks) {
        int fd = ::bpf_obj_get((shared + "/" + name).c_str());
        if (fd < 0) return false;
        bpf_link_info info{};
        uint32_t len = sizeof info;
        int rc = ::bpf_obj_get_info_by_fd(fd, &info, &len);
        ::close(fd);
        if (rc < 0 || info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != parent) return false;
    }
    for (const char* name : kSharedMaps)
        if (!fs::exists(shared + "/" + name)) return false;
    return true;
}

// Loads the programs and attaches them to `parent_dir`, pinning links and shared maps.
Status load_programs(const std::string& run_dir, const std::string& parent_dir) {
    std::string shared = shared_dir(run_dir);
    if (auto r = drop_programs(run_dir); !r) return r;
    auto level = cgroup_level(parent_dir);
    if (!level) return fail(level.error());
    libbpf_set_print(quiet);
    struct Skel {
        egress* s = egress__open();
        ~Skel() { egress__destroy(s); }
    } skel;
    if (!skel.s) return fail(bpf_error(errno, "opening the egress programs", shared));
    skel.s->rodata->sandbox_level = *level + 1;
    uint32_t slots = slot_count();
    (void)bpf_map__set_max_entries(skel.s->maps.rules, slots * DSEC_EGRESS_SLOT);
    (void)bpf_map__set_max_entries(skel.s->maps.slots, slots);
    if (int rc = egress__load(skel.s); rc < 0) return fail(bpf_error(rc, "loading the egress programs", shared));
    Fd cg(::open(parent_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg) return fail(sys_error("open", parent_dir));
    if (::mkdir(shared.c_str(), 0700) < 0 && errno != EEXIST) return fail(sys_error("mkdir", shared));
    auto undo = [&](Error e) -> Status {
        (void)drop_programs(run_dir);
        return fail(std::move(e));
    };
    for (bpf_map* map : {skel.s->maps.rules, skel.s->maps.slots, skel.s->maps.denials}) {
        std::string pin = shared + "/" + bpf_map__name(map);
        if (int rc = bpf_map__pin(map, pin.c_str()); rc < 0) return undo(bpf_error(rc, "bpf_map__pin", pin));
    }
    // Links last: a sandbox that finds them finds the maps too.
    bpf_program* progs[] = {skel.s->progs.connect4, skel.s->progs.connect6, skel.s->progs.sendmsg4,
                            skel.s->progs.sendmsg6, skel.s->progs.sock_create};
    for (size_t i = 0; i < std::size(progs); i++) {
        bpf_link* link = bpf_program__attach_cgroup(progs[i], cg.get());
        if (!link) return undo(bpf_error(errno, std::string("attaching ") + kLinks[i], parent_dir));
        std::string pin = shared + "/" + kLinks[i];
        int rc = bpf_link__pin(link, pin.c_str());
        bpf_link__destroy(link);  // the pin holds it from here on (or, on error, nothing does)
        if (rc < 0) return undo(bpf_error(rc, "bpf_link__pin", pin));
    }
    return {};
}

// The ids of the programs the pinned links run, in kLinks' order.
Result<std::vector<uint32_t>> linked_programs(const std::string& shared) {
    std::vector<uint32_t> ids;
    for (const char* name : kLinks) {
        auto fd = open_pin(shared + "/" + name);
        if (!fd) return fail(fd.error());
        bpf_link_info info{};
        uint32_t len = sizeof info;
        if (::bpf_obj_get_info_by_fd(fd->get(), &info, &len) < 0) return fail(bpf_error(errno, "bpf_obj_get_info", name));
        ids.push_back(info.prog_id);
    }
    return ids;
}

// Whether each program is in force on the cgroup `dir` (among its effective ones).
Status check_effective(const std::string& shared, const std::string& dir) {
    auto ids = linked_programs(shared);
    if (!ids) return fail(ids.error());
    Fd cg(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg) return fail(sys_error("open", dir));
    for (size_t i = 0; i < std::size(kAttachTypes); i++) {
        uint32_t have[64], count = 64;
        if (::bpf_prog_query(cg.get(), kAttachTypes[i], BPF_F_QUERY_EFFECTIVE, nullptr, have, &count) < 0)
            return fail(bpf_error(errno, "bpf_prog_query", dir));
        if (std::find(have, have + count, (*ids)[i]) == have + count)
            return fail(make_error(Code::bpf, std::string("the egress program ") + kLinks[i] + " is not in force on the cgroup", dir));
    }
    return {};
}

// The keys of the denials map `fd` counted for the cgroup `cg`.
std::vector<dsec_egress_denial> denial_keys(int fd, uint64_t cg) {
    std::vector<dsec_egress_denial> out;
    dsec_egress_denial key{}, next{};
    bool first = true;
    while (::bpf_map_get_next_key(fd, first ? nullptr : &key, &next) == 0) {
        first = false;
        key = next;
        if (key.cgroup == cg) out.push_back(key);
    }
    return out;
}

// The cgroup id sandbox `id`'s pins are kept under (the name of its second pin of the
// slots map). Errors: not_found.
Result<uint64_t> cgroup_of_pins(const std::string& pins) {
    auto names = fs::list_dir(pins);
    if (names)
        for (auto& n : *names)
            if (n.starts_with(kCgroupPin)) return std::strtoull(n.c_str() + kCgroupPin.size(), nullptr, 10);
    return fail(make_error(Code::not_found, "the sandbox has no egress rules pinned", pins));
}

// A slot no sandbox holds (of as many as the loaded programs have). Errors: exhausted.
Result<uint32_t> free_slot(int slots_fd) {
    bpf_map_info info{};
    uint32_t len = sizeof info;
    if (::bpf_obj_get_info_by_fd(slots_fd, &info, &len) < 0) return fail(bpf_error(errno, "bpf_obj_get_info", "slots"));
    std::vector<bool> used(info.max_entries);
    uint64_t key = 0, next = 0;
    bool first = true;
    while (::bpf_map_get_next_key(slots_fd, first ? nullptr : &key, &next) == 0) {
        first = false;
        key = next;
        uint32_t slot = 0;
        if (::bpf_map_lookup_elem(slots_fd, &key, &slot) == 0 && slot < used.size()) used[slot] = true;
    }
    for (uint32_t i = 0; i < used.size(); i++)
        if (!used[i]) return i;
    return fail(make_error(Code::exhausted, "every one of the " + std::to_string(used.size()) +
                                            " egress slots of the run directory is in use (DSEC_EGRESS_SLOTS)"));
}

// The first rule array index of the slot of cgroup `cg`. Errors: not_found, bpf.
Result<uint32_t> base_of(int slots_fd, uint64_t cg) {
    uint32_t slot = 0;
    if (::bpf_map_lookup_elem(slots_fd, &cg, &slot) < 0) {
        if (errno == ENOENT) return fail(make_error(Code::not_found, "the sandbox has no egress slot"));
        return fail(bpf_error(errno, "bpf_map_lookup_elem", "slots"));
    }
    return slot * uint32_t(DSEC_EGRESS_SLOT);
}
}  // namespace

std::string bpffs_dir(const std::string& run_dir) { return run_dir + "/bpf"; }
// bpffs refuses names with a dot, which sandbox ids may have: a dot is written as ':',
// which no id has.
std::string pin_dir(const std::string& run_dir, const std::string& id) {
    std::string name = id;
    std::replace(name.begin(), name.end(), '.', ':');
    return bpffs_dir(run_dir) + "/" + name;
}
std::string shared_dir(const std::string& run_dir) { return bpffs_dir(run_dir) + "/-egress"; }

Status ensure_bpffs(const std::string& run_dir) {
    std::string dir = bpffs_dir(run_dir);
    if (auto r = fs::mkdir_p(dir, 0700); !r) return fail(r.error());
    struct statfs sfs;
    if (::statfs(dir.c_str(), &sfs) < 0) return fail(sys_error("statfs", dir));
    if (sfs.f_type == BPF_FS_MAGIC) return {};
    if (::mount("dsec-bpf", dir.c_str(), "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0)
        return fail(sys_error("mount bpf", dir));
    return {};
}

Status attach_egress(const std::string& run_dir, const std::string& id, const std::string& unified_cgroup,
                     const RuleTable& table) {
    std::string shared = shared_dir(run_dir);
    std::string parent = unified_cgroup.substr(0, unified_cgroup.rfind('/'));
    auto parent_id = cgroup_id(parent);
    if (!parent_id) return fail(parent_id.error());
    if (!links_on(shared, *parent_id))
        if (auto r = load_programs(run_dir, parent); !r) return r;
    auto cg = cgroup_id(unified_cgroup);
    if (!cg) return fail(cg.error());
    auto slots = open_pin(shared + "/slots");
    if (!slots) return fail(slots.error());
    auto rules = open_pin(shared + "/rules");
    if (!rules) return fail(rules.error());
    // A slot of the rule array, filled before it is registered: from registration on the
    // sandbox's cgroup is judged by it. Plain array and hash updates: no RCU grace period
    // to wait for, as a map-in-map insertion would.
    auto slot = free_slot(slots->get());
    if (!slot) return fail(slot.error());
    if (auto r = write_table(rules->get(), *slot * uint32_t(DSEC_EGRESS_SLOT), table, false, id); !r) return r;
    std::string pins = pin_dir(run_dir, id);
    if (::mkdir(pins.c_str(), 0700) < 0 && errno != EEXIST) return fail(sys_error("mkdir", pins));
    auto undo = [&](Error e) -> Status {
        (void)detach_egress(run_dir, id);
        return fail(std::move(e));
    };
    std::string pin = pins + "/" + std::string(kCgroupPin) + std::to_string(*cg);
    if (::bpf_obj_pin(slots->get(), pin.c_str()) < 0) return undo(bpf_error(errno, "bpf_obj_pin", pin));
    if (::bpf_map_update_elem(slots->get(), &*cg, &*slot, BPF_NOEXIST) < 0)
        return undo(bpf_error(errno, "bpf_map_update_elem", shared + "/slots"));
    if (auto r = check_effective(shared, unified_cgroup); !r) return undo(r.error());
    return {};
}

Status update_egress(const std::string& run_dir, const std::string& id, const RuleTable& table) {
    auto cg = cgroup_of_pins(pin_dir(run_dir, id));
    if (!cg) return fail(cg.error());
    auto slots = open_pin(shared_dir(run_dir) + "/slots");
    if (!slots) return fail(slots.error());
    auto rules = open_pin(shared_dir(run_dir) + "/rules");
    if (!rules) return fail(rules.error());
    auto base = base_of(slots->get(), *cg);
    if (!base) return fail(base.error());
    return write_table(rules->get(), *base, table, true, pin_dir(run_dir, id));
}

Result<std::vector<Denial>> read_denials(const std::string& run_dir, const std::string& id) {
    auto cg = cgroup_of_pins(pin_dir(run_dir, id));
    if (!cg) return fail(cg.error());
    auto map = open_pin(shared_dir(run_dir) + "/denials");
    if (!map) return fail(map.error());
    std::vector<Denial> out;
    for (auto& key : denial_keys(map->get(), *cg)) {
        uint64_t n = 0;
        if (::bpf_map_lookup_elem(map->get(), &key, &n) < 0) continue;  // evicted meanwhile
        Denial d;
        d.family = key.family;
        std::memcpy(d.addr.data(), key.addr, 16);
        d.port = key.port;
        d.proto = key.proto;
        d.kind = key.kind;
        d.count = n;
        out.push_back(d);
    }
    return out;
}

std::vector<std::string> pinned_ids(const std::string& run_dir) {
    std::vector<std::string> out;
    auto names = fs::list_dir(bpffs_dir(run_dir));
    if (!names) return out;
    for (auto& n : *names) {
        struct stat st;
        // Not the shared directory ("-egress": no sandbox id starts with '-').
        if (!n.starts_with("-") && ::lstat((bpffs_dir(run_dir) + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            {
            std::replace(n.begin(), n.end(), ':', '.');
            out.push_back(n);
        }
    }
    return out;
}

Status detach_egress(const std::string& run_dir, const std::string& id) {
    std::string pins = pin_dir(run_dir, id);
    if (!fs::exists(pins)) return {};
    auto cg = cgroup_of_pins(pins);
    if (cg) {
        if (auto slots = open_pin(shared_dir(run_dir) + "/slots"); slots)
            if (::bpf_map_delete_elem(slots->get(), &*cg) < 0 && errno != ENOENT)
                return fail(bpf_error(errno, "bpf_map_delete_elem", shared_dir(run_dir) + "/slots"));
        // Its denial counts go too (a cgroup id is never used again, so nothing else
        // would ever read them).
        if (auto denials = open_pin(shared_dir(run_dir) + "/denials"); denials)
            for (auto& k : denial_keys(denials->get(), *cg)) (void)::bpf_map_delete_elem(denials->get(), &k);
        std::string pin = pins + "/" + std::string(kCgroupPin) + std::to_string(*cg);
        if (::unlink(pin.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", pin));
    }
    if (::rmdir(pins.c_str()) < 0 && errno != ENOENT) return fail(sys_error("rmdir", pins));
    return {};
}

Status drop_programs(const std::string& run_dir) {
    std::string shared = shared_dir(run_dir);
    if (!fs::exists(shared)) return {};
    for (const char* name : kLinks) {
        std::string pin = shared + "/" + name;
        if (::unlink(pin.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", pin));
    }
    for (const char* name : kSharedMaps) {
        std::string pin = shared + "/" + name;
        if (::unlink(pin.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", pin));
    }
    if (::rmdir(shared.c_str()) < 0 && errno != ENOENT) return fail(sys_error("rmdir", shared));
    return {};
}

}  // namespace dsec::net
