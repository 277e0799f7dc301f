// A guard policy document (dsec-guard check / apply, dsec-run create --policy): parsed,
// written back as its record, and read again to the same record.
#include <cstdlib>

#include "dsec/guard/policy.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto policy = guard::parse_policy(text);
    if (!policy) return 0;
    nlohmann::json record = guard::policy_record(*policy);
    // The record is a policy document too: it must read back to itself.
    auto again = guard::parse_policy(record.dump());
    if (!again || guard::policy_record(*again) != record) std::abort();
    return 0;
}
