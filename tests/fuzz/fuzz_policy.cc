// A guard policy document (dsec-guard check / apply, dsec-run create --policy): parsed
// and written as its normalised record. When that record (less its digest, which hashes
// the text) reads back as a policy, it must give the same record.
#include <cstdlib>

#include "dsec/guard/policy.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto policy = guard::parse_policy(text);
    if (!policy) return 0;
    nlohmann::json record = guard::policy_record(*policy);
    record.erase("digest");
    auto again = guard::parse_policy(record.dump());
    if (!again) return 0;
    nlohmann::json second = guard::policy_record(*again);
    second.erase("digest");
    if (second != record) std::abort();
    return 0;
}
