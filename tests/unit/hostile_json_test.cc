// JSON of the wrong shape where dsec expects objects and strings (what the fuzz targets
// found): refused with bad_input, never an exception out of the library.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include "dsec/json/jsonl.h"
#include "dsec/layer/oci.h"
#include "dsec/sys/fs.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("a record's type is read only when it is a string") {
    CHECK(jsonl::type_of(json{{"type", "rootfs"}}) == "rootfs");
    CHECK(jsonl::type_of(json{{"type", 1}}).empty());
    CHECK(jsonl::type_of(json{{"type", json::array({"error"})}}).empty());
    CHECK(jsonl::type_of(json::array()).empty());
}

TEST_CASE("an image index whose entries are not objects") {
    auto first = layer::pick_manifest(json{{"manifests", {1}}}, "");
    REQUIRE(!first);
    CHECK(first.error().code == Code::bad_input);
    // A platform that is a string, and entries of other types, are skipped.
    json index = {{"manifests", {7, {{"platform", "linux"}}, {{"digest", "d"}, {"platform", {{"os", 1}}}}}}};
    auto picked = layer::pick_manifest(index, "linux/amd64");
    REQUIRE(!picked);
    CHECK(picked.error().code == Code::not_found);
}

TEST_CASE("image manifests with fields of the wrong type are bad_input") {
    auto tmp = fs::TempDir::make("/tmp", "dsec-unit-oci.");
    REQUIRE(tmp);
    Fd dir(::open(tmp->path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(fs::atomic_write(tmp->path() + "/manifest.json", R"([{"Config":5}])"));
    auto docker = layer::read_image_manifest(dir.get(), "image", "");
    REQUIRE(!docker);
    CHECK(docker.error().code == Code::bad_input);
    REQUIRE(::unlink((tmp->path() + "/manifest.json").c_str()) == 0);
    const std::string hex(64, 'a');
    REQUIRE(fs::atomic_write(tmp->path() + "/index.json", R"({"manifests":[{"digest":"sha256:)" + hex + R"("}]})"));
    REQUIRE(fs::mkdir_p(tmp->path() + "/blobs/sha256"));
    // The manifest names itself as config, so only the layer entry is wrong.
    for (std::string manifest : {R"({"layers":[7],"config":{"digest":"sha256:)" + hex + R"("}})",
                                 std::string(R"({"layers":"x","config":1})"), std::string(R"({"layers":[],"config":[]})")}) {
        REQUIRE(fs::atomic_write(tmp->path() + "/blobs/sha256/" + hex, manifest));
        auto oci = layer::read_image_manifest(dir.get(), "image", "");
        REQUIRE(!oci);
        CHECK(oci.error().code == Code::bad_input);
    }
}
