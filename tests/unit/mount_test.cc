#include <doctest/doctest.h>

#include <set>

#include "dsec/mount/layers.h"
#include "dsec/mount/overlay.h"
#include "dsec/mount/rootfs.h"
#include "dsec/mount/stack.h"

using namespace dsec;

static mount::Rootfs sample_rootfs() {
    mount::Rootfs r;
    r.id = "0123456789abcdef";
    r.layers = {{"sha256:" + std::string(64, 'a'), "base", "/run/dsec/layers/" + std::string(64, 'a')},
                {"sha256:" + std::string(64, 'b'), "task", "/run/dsec/layers/" + std::string(64, 'b')}};
    r.lowerdirs = {r.layers[1].path, r.layers[0].path};
    r.upper = "/var/lib/dsec/sandboxes/0123456789abcdef/upper";
    r.work = "/var/lib/dsec/sandboxes/0123456789abcdef/work";
    r.config = {{"env", {"PATH=/bin"}}, {"workdir", "/"}};
    return r;
}

TEST_CASE("rootfs records round-trip") {
    auto r = sample_rootfs();
    auto rec = r.to_record();
    CHECK(rec["type"] == "rootfs");
    CHECK(rec["v"] == 1);
    CHECK(rec["layers"][0]["name"] == "base");
    CHECK(rec["lowerdirs"][0] == r.layers[1].path);
    auto back = mount::Rootfs::from_record(nlohmann::json::parse(rec.dump()));
    REQUIRE(back);
    CHECK(back->id == r.id);
    CHECK(back->lowerdirs == r.lowerdirs);
    CHECK(back->layers.size() == 2);
    CHECK(back->layers[1].digest == r.layers[1].digest);
    CHECK(back->upper == r.upper);
    CHECK(back->work == r.work);
    CHECK(back->config == r.config);
}

TEST_CASE("rootfs records: missing or mistyped fields are bad_input") {
    auto rec = sample_rootfs().to_record();
    for (auto field : {"id", "lowerdirs"}) {
        auto j = rec;
        j.erase(field);
        auto r = mount::Rootfs::from_record(j);
        REQUIRE(!r);
        CHECK(r.error().code == Code::bad_input);
        CHECK(r.error().message.find(field) != std::string::npos);
    }
    auto j = rec;
    j["lowerdirs"] = {1, 2};
    CHECK(!mount::Rootfs::from_record(j));
    j = rec;
    j["layers"] = {{{"name", "no digest"}}};
    CHECK(!mount::Rootfs::from_record(j));
    j = rec;
    j["layers"][0]["name"] = 7;  // a wrong type does not throw
    CHECK(mount::Rootfs::from_record(j));
    CHECK(!mount::Rootfs::from_record(nlohmann::json::array()));
}

TEST_CASE("sandbox ids: fresh ones are 16 hex digits and differ") {
    std::set<std::string> seen;
    for (int i = 0; i < 100; i++) {
        auto id = random_hex(kRootfsIdBytes);
        CHECK(id.size() == 16);
        CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
        CHECK(mount::check_id(id));
        seen.insert(id);
    }
    CHECK(seen.size() == 100);
    CHECK(mount::check_id("task-4711.run_2"));
    CHECK(!mount::check_id(""));
    CHECK(!mount::check_id("../etc"));
    CHECK(!mount::check_id("-x"));
    CHECK(!mount::check_id(std::string(65, 'a')));
}

TEST_CASE("overlays: more than 500 lowers is too_many_layers, suggesting a squash") {
    mount::OverlaySpec spec;
    spec.lowerdirs.assign(mount::kMaxLowers + 1, "/nonexistent");
    auto r = mount::make_overlay(spec);
    REQUIRE(!r);
    CHECK(r.error().code == Code::too_many_layers);
    CHECK(r.error().message.find("--squash") != std::string::npos);
    CHECK(mount::make_overlay({}).error().code == Code::bad_input);
    spec.lowerdirs = {"/a", "/b"};
    spec.upper = "/u";  // no work dir
    CHECK(mount::make_overlay(spec).error().code == Code::bad_input);
}

TEST_CASE("rootfs: too many layers fails before anything is mounted") {
    Paths paths{"/nonexistent/root", "/nonexistent/run", ""};
    std::vector<layer::Layer> layers(mount::kMaxLowers + 1);
    auto r = mount::make_rootfs(paths, layers, "", false);
    REQUIRE(!r);
    CHECK(r.error().code == Code::too_many_layers);
    CHECK(mount::make_rootfs(paths, {}, "", false).error().code == Code::bad_input);
}

TEST_CASE("layer mount paths are named by the digest's hex") {
    Paths paths{"/var/lib/dsec", "/run/dsec", ""};
    std::string hex(64, 'c');
    CHECK(mount::layer_mountpoint(paths, "sha256:" + hex) == "/run/dsec/layers/" + hex);
    CHECK(mount::layer_mountpoint(paths, hex) == "/run/dsec/layers/" + hex);
    CHECK(mount::layer_lock_path(paths, "sha256:" + hex) == "/run/dsec/locks/layer-" + hex + ".lock");
    CHECK(mount::sandbox_dir(paths, "x1") == "/var/lib/dsec/sandboxes/x1");
    CHECK(!mount::is_layer_mount("/nonexistent"));
}
