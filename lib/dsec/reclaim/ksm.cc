#include "dsec/reclaim/ksm.h"

#include <unistd.h>

#include <string>

#include "dsec/sys/fs.h"

namespace dsec::reclaim {

namespace {
constexpr const char* kKsm = "/sys/kernel/mm/ksm";

int64_t read_ksm(const char* name) {
    auto text = fs::read_file(std::string(kKsm) + "/" + name);
    return text ? std::strtoll(text->c_str(), nullptr, 10) : 0;
}
}  // namespace

Status ksm_run(bool on) {
    std::string path = std::string(kKsm) + "/run";
    if (!fs::exists(path)) return fail(make_error(Code::unsupported, "the kernel has no KSM", path));
    return fs::write_text(path, on ? "1" : "0");
}

nlohmann::json ksm_status() {
    int64_t page = ::sysconf(_SC_PAGESIZE);
    int64_t sharing = read_ksm("pages_sharing");
    std::string profit = std::string(kKsm) + "/general_profit";
    return {{"type", "ksm"},
            {"v", 1},
            {"running", read_ksm("run") == 1},
            {"pages_shared", read_ksm("pages_shared")},
            {"pages_sharing", sharing},
            {"pages_unshared", read_ksm("pages_unshared")},
            {"full_scans", read_ksm("full_scans")},
            {"saved", fs::exists(profit) ? read_ksm("general_profit") : sharing * page}};
}

}  // namespace dsec::reclaim
