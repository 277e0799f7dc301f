#include "dsec/net/link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstdlib>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/proc.h"

namespace dsec::net {

namespace {
std::string dotted(uint32_t host_order) {
    in_addr a{htonl(host_order)};
    char text[INET_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    return text;
}

// Runs `ip -batch FILE` with `lines` (one exec for several changes), optionally inside
// the network namespace of `pid`.
Status ip_batch(const std::string& file, const std::string& lines, int pid) {
    if (auto r = fs::atomic_write(file, lines, 0600); !r) return fail(r.error());
    std::vector<std::string> argv = {"ip", "-batch", file};
    if (pid > 0) argv.insert(argv.begin(), {"nsenter", "--net=/proc/" + std::to_string(pid) + "/ns/net", "--"});
    Status done = proc::run_checked(argv);
    ::unlink(file.c_str());
    return done;
}
}  // namespace

Result<Pool> pool_from_env() {
    Pool pool;
    const char* env = std::getenv("DSEC_NET_POOL");
    if (!env || !*env) return pool;
    std::string text = env;
    auto slash = text.find('/');
    in_addr a{};
    char* end = nullptr;
    unsigned long prefix = slash == std::string::npos ? 0 : std::strtoul(text.c_str() + slash + 1, &end, 10);
    if (slash == std::string::npos || ::inet_pton(AF_INET, text.substr(0, slash).c_str(), &a) != 1 || !end || *end ||
        prefix < 8 || prefix > 28 || (ntohl(a.s_addr) & ((1u << (32 - prefix)) - 1)) != 0)
        return fail(make_error("usage", "DSEC_NET_POOL must be an IPv4 network A.B.C.D/LEN with LEN 8-28 and no host "
                                        "bits, got \"" + text + "\""));
    pool.first = ntohl(a.s_addr);
    pool.prefix = unsigned(prefix);
    return pool;
}

Link link_for(const Pool& pool, uint32_t slot) {
    uint32_t base = pool.first + slot * 4;
    return Link{slot, "dsec-n" + std::to_string(slot), dotted(base + 1), dotted(base + 2)};
}

bool link_exists(const std::string& host_if) { return ::if_nametoindex(host_if.c_str()) != 0; }

Result<Link> make_link(const Pool& pool, int init_pid, const std::string& scratch_dir) {
    uint32_t start = 0;
    if (::getrandom(&start, sizeof start, 0) != sizeof start) start = uint32_t(::getpid());
    std::string netns = std::to_string(init_pid);
    for (uint32_t i = 0; i < pool.slots(); i++) {
        uint32_t slot = (start + i) % pool.slots();
        Link l = link_for(pool, slot);
        if (link_exists(l.host_if)) continue;
        auto made = proc::run({"ip", "link", "add", l.host_if, "type", "veth", "peer", "name", "eth0", "netns", netns});
        if (!made) return fail(made.error());
        if (made->status != 0) {
            // Taken between the check and the add by a create beside this one.
            if (made->stderr_tail.find("File exists") != std::string::npos) continue;
            return fail(make_error("helper_failed", "ip link add " + l.host_if + ": " + made->stderr_tail));
        }
        auto undo = [&](Error e) -> Result<Link> {
            (void)remove_link(l.host_if);
            return fail(std::move(e).context("setting up " + l.host_if));
        };
        std::string host = "addr add " + l.host_addr + "/30 dev " + l.host_if + "\nlink set " + l.host_if + " up\n";
        if (auto r = ip_batch(scratch_dir + "/ip-host", host, 0); !r) return undo(r.error());
        // A sandbox's packets are forwarded only from its own interface; the host-wide
        // switch is left as it is.
        std::string fwd = "/proc/sys/net/ipv4/conf/" + l.host_if + "/forwarding";
        Fd f(::open(fwd.c_str(), O_WRONLY | O_CLOEXEC));
        if (!f || ::write(f.get(), "1", 1) != 1) return undo(sys_error("write", fwd));
        std::string inside = "addr add " + l.sandbox_addr + "/30 dev eth0\nlink set eth0 up\nroute add default via " +
                             l.host_addr + " dev eth0\n";
        if (auto r = ip_batch(scratch_dir + "/ip-inside", inside, init_pid); !r) return undo(r.error());
        return l;
    }
    return fail(make_error("exhausted", "every one of the " + std::to_string(pool.slots()) +
                                            " sandbox network slots is in use (DSEC_NET_POOL)"));
}

Status remove_link(const std::string& host_if) {
    if (!link_exists(host_if)) return {};
    auto out = proc::run({"ip", "link", "del", host_if});
    if (!out) return fail(out.error());
    if (out->status != 0 && link_exists(host_if))
        return fail(make_error("helper_failed", "ip link del " + host_if + ": " + out->stderr_tail));
    return {};
}

}  // namespace dsec::net
