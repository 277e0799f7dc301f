#include "dsec/reclaim/swap.h"

#include <sys/swap.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "dsec/sys/fs.h"
#include "dsec/sys/proc.h"

namespace dsec::reclaim {

namespace {
Status write_sys(const std::string& file, const std::string& value) {
    return fs::write_text(std::string(kZramSys) + "/" + file, value);
}

uint64_t read_sys(const std::string& file) {
    auto text = fs::read_file(std::string(kZramSys) + "/" + file);
    return text ? std::strtoull(text->c_str(), nullptr, 10) : 0;
}

bool active() {
    auto swaps = fs::read_file("/proc/swaps");
    return swaps && swap_active(*swaps, kZramDevice);
}
}  // namespace

bool swap_active(const std::string& proc_swaps, const std::string& device) {
    std::string name = device.substr(device.rfind('/') + 1);
    std::istringstream in(proc_swaps);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string path, type;
        if (!(fields >> path >> type) || type != "partition") continue;
        if (path == device || path.substr(path.rfind('/') + 1) == name) return true;
    }
    return false;
}

Status zram_on(uint64_t bytes) {
    if (!fs::exists(kZramSys))
        return fail(make_error(Code::not_found, "no zram device (modprobe zram)", kZramSys));
    if (active() || read_sys("disksize") != 0)
        return fail(make_error(Code::busy, "the zram device is set up already (dsec-reclaim swap --off first)", kZramDevice));
    // zstd where the kernel has it: the best ratio for the text and code sandboxes hold.
    (void)write_sys("comp_algorithm", "zstd");
    if (auto r = write_sys("disksize", std::to_string(bytes)); !r) return r;
    if (auto r = proc::run_checked({"mkswap", kZramDevice}); !r) {
        (void)write_sys("reset", "1");
        return r;
    }
    // Above any disk swap: compressed RAM is the faster place for idle pages.
    if (::swapon(kZramDevice, SWAP_FLAG_PREFER | (100 << SWAP_FLAG_PRIO_SHIFT)) < 0) {
        Error e = sys_error("swapon", kZramDevice);
        (void)write_sys("reset", "1");
        return fail(e);
    }
    return {};
}

Status zram_off() {
    if (active() && ::swapoff(kZramDevice) < 0) return fail(sys_error("swapoff", kZramDevice));
    if (fs::exists(kZramSys) && read_sys("disksize") != 0) return write_sys("reset", "1");
    return {};
}

nlohmann::json zram_status() {
    nlohmann::json s = {{"type", "swap"}, {"v", 1}, {"device", kZramDevice}, {"active", active()},
                        {"disksize", read_sys("disksize")}};
    // mm_stat: orig_data_size compr_data_size mem_used_total ...
    if (auto mm = fs::read_file(std::string(kZramSys) + "/mm_stat"); mm) {
        std::istringstream in(*mm);
        uint64_t stored = 0, compressed = 0, used = 0;
        in >> stored >> compressed >> used;
        s["stored"] = stored;
        s["compressed"] = compressed;
        s["used"] = used;
    }
    return s;
}

}  // namespace dsec::reclaim
