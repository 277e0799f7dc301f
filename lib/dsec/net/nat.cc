#include "dsec/net/nat.h"

#include <arpa/inet.h>

#include "dsec/cgroup/cgroup.h"
#include "dsec/net/netlink.h"
#include "dsec/sys/proc.h"

namespace dsec::net {

std::string table_for(const std::string& run_dir) { return cgroup::parent_for_run(run_dir); }

Result<fs::Lock> lock_network(const std::string& run_dir) { return fs::lock(run_dir + "/net.lock"); }

Status nat_ensure(const std::string& run_dir, const Pool& pool) {
    auto there = Rtnl::nft_table_exists(table_for(run_dir));
    if (!there) return fail(there.error());
    if (*there) return {};
    std::string t = "inet " + table_for(run_dir);
    in_addr first{htonl(pool.first)};
    char net[INET_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET, &first, net, sizeof net);
    // One transaction; idempotent (the chains are flushed and written again), so a table
    // left half-made or by an older dsec ends up exactly as below.
    std::string script = "add table " + t + "\n" +
                         "add chain " + t + " forward { type filter hook forward priority 0; policy accept; }\n" +
                         "add chain " + t + " postrouting { type nat hook postrouting priority 100; policy accept; }\n" +
                         "flush chain " + t + " forward\n" +
                         "flush chain " + t + " postrouting\n" +
                         "add rule " + t + " forward oifname \"dsec-n*\" ct state established,related accept\n" +
                         "add rule " + t + " forward oifname \"dsec-n*\" drop\n" +
                         "add rule " + t + " postrouting ip saddr " + net + "/" + std::to_string(pool.prefix) +
                         " oifname != \"dsec-n*\" masquerade\n" +
                         "add rule " + t + " postrouting ip6 saddr " + pool6_text(pool) +
                         " oifname != \"dsec-n*\" masquerade\n";
    if (auto r = proc::run_checked({"nft", script}); !r) return fail(std::move(r.error()).context("NAT table " + t));
    return {};
}

Status nat_drop_table(const std::string& run_dir) {
    auto out = proc::run({"nft", "delete table inet " + table_for(run_dir)});
    if (!out) return fail(out.error());
    if (out->status != 0 && out->stderr_tail.find("No such file or directory") == std::string::npos)
        return fail(make_error(Code::helper_failed, "nft delete table: " + out->stderr_tail));
    return {};
}

}  // namespace dsec::net
