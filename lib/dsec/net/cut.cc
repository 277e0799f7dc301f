#include "dsec/net/cut.h"

#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "dsec/sys/fd.h"

namespace dsec::net {

namespace {
constexpr int kTcpListen = 10, kTcpClose = 7;

struct Request {
    nlmsghdr h;
    inet_diag_req_v2 r;
};

// A netlink socket in the network namespace of `pid`: a socket stays in the namespace
// it was made in, so this thread goes there for the socket() call only.
Result<Fd> diag_socket_in(int pid) {
    std::string target = "/proc/" + std::to_string(pid) + "/ns/net";
    Fd theirs(::open(target.c_str(), O_RDONLY | O_CLOEXEC));
    if (!theirs) return fail(errno == ENOENT ? make_error(Code::not_running, "the sandbox's init is gone", target)
                                             : sys_error("open", target));
    Fd ours(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!ours) return fail(sys_error("open", "/proc/thread-self/ns/net"));
    if (::setns(theirs.get(), CLONE_NEWNET) < 0) return fail(sys_error("setns", target));
    Fd sock(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    int saved = errno;
    if (::setns(ours.get(), CLONE_NEWNET) < 0) return fail(sys_error("setns", "back to the host's network namespace"));
    if (!sock) return fail(errno_error(saved, "socket", "NETLINK_SOCK_DIAG"));
    return sock;
}

Status send_request(int fd, uint16_t type, uint16_t flags, const inet_diag_req_v2& r) {
    Request req{};
    req.h.nlmsg_len = sizeof req;
    req.h.nlmsg_type = type;
    req.h.nlmsg_flags = flags;
    req.r = r;
    if (::send(fd, &req, sizeof req, 0) < 0) return fail(sys_error("send", "sock_diag"));
    return {};
}

// Every socket of one family and protocol whose peer is set and refused.
Result<std::vector<inet_diag_req_v2>> refused(int fd, uint8_t family, uint8_t proto, const RuleTable& table) {
    inet_diag_req_v2 r{};
    r.sdiag_family = family;
    r.sdiag_protocol = proto;
    r.idiag_states = ~((1u << kTcpListen) | (1u << kTcpClose));
    if (auto s = send_request(fd, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, r); !s) return fail(s.error());
    std::vector<inet_diag_req_v2> out;
    std::vector<char> buf(32768);
    for (;;) {
        ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(sys_error("recv", "sock_diag"));
        for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, unsigned(n)); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE) return out;
            if (h->nlmsg_type == NLMSG_ERROR) {
                auto* e = static_cast<nlmsgerr*>(NLMSG_DATA(h));
                return fail(errno_error(-e->error, "sock_diag dump"));
            }
            auto* m = static_cast<inet_diag_msg*>(NLMSG_DATA(h));
            std::array<uint8_t, 16> peer{};
            std::memcpy(peer.data(), m->id.idiag_dst, family == AF_INET ? 4 : 16);
            int fam = family;
            // ::ffff:a.b.c.d is judged as a.b.c.d, as the programs do.
            static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
            if (family == AF_INET6 && std::memcmp(peer.data(), kMapped, 12) == 0) {
                std::memmove(peer.data(), peer.data() + 12, 4);
                std::memset(peer.data() + 4, 0, 12);
                fam = AF_INET;
            }
            bool unset = std::all_of(peer.begin(), peer.end(), [](uint8_t b) { return b == 0; });
            if (unset || allows(table, fam, peer, ntohs(m->id.idiag_dport), proto)) continue;
            inet_diag_req_v2 kill{};
            kill.sdiag_family = family;
            kill.sdiag_protocol = proto;
            kill.idiag_states = 1u << m->idiag_state;
            kill.id = m->id;
            out.push_back(kill);
        }
    }
}

Status destroy_one(int fd, const inet_diag_req_v2& r) {
    if (auto s = send_request(fd, SOCK_DESTROY, NLM_F_REQUEST | NLM_F_ACK, r); !s) return s;
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
    }
    if (n < 0) return fail(sys_error("recv", "sock_diag"));
    auto* h = reinterpret_cast<nlmsghdr*>(buf);
    if (NLMSG_OK(h, unsigned(n)) && h->nlmsg_type == NLMSG_ERROR) {
        int err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
        // ENOENT: it closed meanwhile.
        if (err == EOPNOTSUPP)
            return fail(make_error(Code::unsupported, "this kernel cannot destroy sockets (CONFIG_INET_DIAG_DESTROY)"));
        if (err != 0 && err != ENOENT) return fail(errno_error(err, "SOCK_DESTROY"));
    }
    return {};
}
}  // namespace

Result<int> cut_connections(int init_pid, const RuleTable& table) {
    auto sock = diag_socket_in(init_pid);
    if (!sock) return fail(sock.error());
    int cut = 0;
    for (uint8_t family : {uint8_t(AF_INET), uint8_t(AF_INET6)})
        for (uint8_t proto : {uint8_t(IPPROTO_TCP), uint8_t(IPPROTO_UDP)}) {
            auto victims = refused(sock->get(), family, proto, table);
            if (!victims) return fail(victims.error());
            for (auto& v : *victims) {
                if (auto r = destroy_one(sock->get(), v); !r) return fail(r.error());
                cut++;
            }
        }
    return cut;
}

}  // namespace dsec::net
