#include "dsec/net/nat.h"

#include "dsec/cgroup/cgroup.h"
#include "dsec/sys/proc.h"

namespace dsec::net {

namespace {
// nft takes a whole script as one argument and applies it as one transaction.
Status nft(const std::string& script) { return proc::run_checked({"nft", script}); }

// The same, where an absent table or element is no error.
Status nft_absent_ok(const std::string& script) {
    auto out = proc::run({"nft", script});
    if (!out) return fail(out.error());
    if (out->status != 0 && out->stderr_tail.find("No such file or directory") == std::string::npos)
        return fail(make_error("helper_failed", "nft " + script + ": " + out->stderr_tail));
    return {};
}
}  // namespace

std::string table_for(const std::string& run_dir) { return cgroup::parent_for_run(run_dir); }

Result<fs::Lock> lock_network(const std::string& run_dir) { return fs::lock(run_dir + "/net.lock"); }

Status nat_add(const std::string& run_dir, const Link& link) {
    std::string t = "inet " + table_for(run_dir);
    // Idempotent: the chains are flushed and their rules written again, so a table left
    // by an older dsec or a half-finished run ends up exactly as below.
    std::string script = "add table " + t + "\n" +
                         "add set " + t + " ifs { type ifname; }\n" +
                         "add set " + t + " addrs { type ipv4_addr; }\n" +
                         "add chain " + t + " forward { type filter hook forward priority 0; policy accept; }\n" +
                         "add chain " + t + " postrouting { type nat hook postrouting priority 100; policy accept; }\n" +
                         "flush chain " + t + " forward\n" +
                         "flush chain " + t + " postrouting\n" +
                         "add rule " + t + " forward oifname @ifs ct state established,related accept\n" +
                         "add rule " + t + " forward oifname @ifs drop\n" +
                         "add rule " + t + " postrouting ip saddr @addrs oifname != @ifs masquerade\n" +
                         "add element " + t + " ifs { \"" + link.host_if + "\" }\n" +
                         "add element " + t + " addrs { " + link.sandbox_addr + " }\n";
    if (auto r = nft(script); !r) return fail(std::move(r.error()).context("NAT for " + link.host_if));
    return {};
}

Status nat_remove(const std::string& run_dir, const std::string& host_if, const std::string& sandbox_addr) {
    std::string t = "inet " + table_for(run_dir);
    // One element at a time: deleting an absent one fails the whole transaction.
    if (auto r = nft_absent_ok("delete element " + t + " ifs { \"" + host_if + "\" }"); !r) return r;
    if (sandbox_addr.empty()) return {};
    return nft_absent_ok("delete element " + t + " addrs { " + sandbox_addr + " }");
}

Status nat_drop_table(const std::string& run_dir) {
    return nft_absent_ok("delete table inet " + table_for(run_dir));
}

}  // namespace dsec::net
