#include "dsec/net/egress.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "dsec/net/egress.skel.h"
#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::net {

namespace {
// libbpf reports through its own printer; its errors come back as values here.
int quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

Error bpf_error(int err, const std::string& op, const std::string& path) {
    Error e = errno_error(err < 0 ? -err : err, op, path);
    e.code = "bpf";
    return e;
}

constexpr const char* kLinks[] = {"connect4", "connect6", "sendmsg4", "sendmsg6", "sock_create"};

Status write_table(int rules_fd, int config_fd, const RuleTable& table, bool switch_over, const std::string& where) {
    uint32_t zero = 0;
    dsec_egress_config cfg{};
    if (switch_over && ::bpf_map_lookup_elem(config_fd, &zero, &cfg) < 0) return fail(bpf_error(errno, "bpf_map_lookup_elem", where));
    uint32_t next = switch_over ? (cfg.live ^ 1u) & 1u : 0;
    for (uint32_t i = 0; i < table.size(); i++) {
        uint32_t key = next * DSEC_EGRESS_MAX_RULES + i;
        if (::bpf_map_update_elem(rules_fd, &key, &table[i], BPF_ANY) < 0)
            return fail(bpf_error(errno, "bpf_map_update_elem", where));
    }
    // The new table's count first (the programs read only the live one's), then the
    // switch: the second update changes only the `live` word.
    cfg.count[next] = uint32_t(table.size());
    if (::bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY) < 0)
        return fail(bpf_error(errno, "bpf_map_update_elem", where));
    cfg.live = next;
    if (::bpf_map_update_elem(config_fd, &zero, &cfg, BPF_ANY) < 0)
        return fail(bpf_error(errno, "bpf_map_update_elem", where));
    return {};
}

Result<Fd> open_pin(const std::string& path) {
    int fd = ::bpf_obj_get(path.c_str());
    if (fd < 0) {
        if (errno == ENOENT) return fail(make_error("not_found", "the sandbox has no egress programs pinned", path));
        return fail(bpf_error(errno, "bpf_obj_get", path));
    }
    return Fd(fd);
}
}  // namespace

std::string bpffs_dir(const std::string& run_dir) { return run_dir + "/bpf"; }
std::string pin_dir(const std::string& run_dir, const std::string& id) { return bpffs_dir(run_dir) + "/" + id; }

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
    libbpf_set_print(quiet);
    std::string pins = pin_dir(run_dir, id);
    struct Skel {
        egress* s = egress__open_and_load();
        ~Skel() { egress__destroy(s); }
    } skel;
    if (!skel.s) return fail(bpf_error(errno, "loading the egress programs", id));
    if (auto r = write_table(bpf_map__fd(skel.s->maps.rules), bpf_map__fd(skel.s->maps.config), table, false, id); !r)
        return r;
    Fd cg(::open(unified_cgroup.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg) return fail(sys_error("open", unified_cgroup));
    if (::mkdir(pins.c_str(), 0700) < 0 && errno != EEXIST) return fail(sys_error("mkdir", pins));
    auto undo = [&](Error e) -> Status {
        (void)detach_egress(run_dir, id);
        return fail(std::move(e));
    };
    bpf_program* progs[] = {skel.s->progs.connect4, skel.s->progs.connect6, skel.s->progs.sendmsg4,
                            skel.s->progs.sendmsg6, skel.s->progs.sock_create};
    for (size_t i = 0; i < std::size(progs); i++) {
        bpf_link* link = bpf_program__attach_cgroup(progs[i], cg.get());
        if (!link) return undo(bpf_error(errno, std::string("attaching ") + kLinks[i], unified_cgroup));
        std::string pin = pins + "/" + kLinks[i];
        int rc = bpf_link__pin(link, pin.c_str());
        bpf_link__destroy(link);  // the pin holds it from here on (or, on error, nothing does)
        if (rc < 0) return undo(bpf_error(rc, "bpf_link__pin", pin));
    }
    for (bpf_map* map : {skel.s->maps.rules, skel.s->maps.config, skel.s->maps.denials}) {
        std::string pin = pins + "/" + bpf_map__name(map);
        if (int rc = bpf_map__pin(map, pin.c_str()); rc < 0) return undo(bpf_error(rc, "bpf_map__pin", pin));
    }
    return {};
}

Status update_egress(const std::string& run_dir, const std::string& id, const RuleTable& table) {
    std::string pins = pin_dir(run_dir, id);
    auto rules = open_pin(pins + "/rules");
    if (!rules) return fail(rules.error());
    auto config = open_pin(pins + "/config");
    if (!config) return fail(config.error());
    return write_table(rules->get(), config->get(), table, true, pins);
}

Result<std::vector<Denial>> read_denials(const std::string& run_dir, const std::string& id) {
    auto map = open_pin(pin_dir(run_dir, id) + "/denials");
    if (!map) return fail(map.error());
    std::vector<Denial> out;
    dsec_egress_denial key{}, next{};
    bool first = true;
    while (::bpf_map_get_next_key(map->get(), first ? nullptr : &key, &next) == 0) {
        first = false;
        key = next;
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
        if (::lstat((bpffs_dir(run_dir) + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(n);
    }
    return out;
}

Status detach_egress(const std::string& run_dir, const std::string& id) {
    std::string pins = pin_dir(run_dir, id);
    if (!fs::exists(pins)) return {};
    for (const char* name : {"connect4", "connect6", "sendmsg4", "sendmsg6", "sock_create", "rules", "config", "denials"}) {
        std::string pin = pins + "/" + name;
        if (::unlink(pin.c_str()) < 0 && errno != ENOENT) return fail(sys_error("unlink", pin));
    }
    if (::rmdir(pins.c_str()) < 0 && errno != ENOENT) return fail(sys_error("rmdir", pins));
    return {};
}

}  // namespace dsec::net
