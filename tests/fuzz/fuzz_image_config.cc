// An image's JSON documents read on their own: the config (Env, Cmd, ...), an OCI index
// with a platform to pick (the first line), and blob digests.
#include "dsec/layer/oci.h"
#include "fuzz_util.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto [platform, body] = fuzz::first_line(data, size);
    nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded()) return 0;
    (void)layer::parse_image_config(j);
    if (j.is_object() && j.contains("config")) (void)layer::parse_image_config(j["config"]);
    if (auto d = layer::pick_manifest(j, platform); d && d->is_object())
        if (auto it = d->find("digest"); it != d->end() && it->is_string()) (void)layer::blob_path(*it);
    (void)layer::blob_path(platform);
    return 0;
}
