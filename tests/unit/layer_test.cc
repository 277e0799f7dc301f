#include <doctest/doctest.h>

#include "dsec/layer/store.h"

using namespace dsec;

TEST_CASE("layer names: the safe set only") {
    CHECK(layer::check_name("python3.12"));
    CHECK(layer::check_name("task-4711_b"));
    CHECK(!layer::check_name(""));
    CHECK(!layer::check_name("../etc"));
    CHECK(!layer::check_name(".hidden"));
    CHECK(!layer::check_name("a/b"));
    CHECK(!layer::check_name(std::string(129, 'a')));
    CHECK(!layer::check_name(std::string(64, 'a')));
    CHECK(!layer::check_name("tmp"));
}

TEST_CASE("layer metadata round-trips through its record") {
    layer::Layer l;
    l.digest = "sha256:" + std::string(64, 'a');
    l.name = "base";
    l.labels = {{"os", "busybox"}};
    l.size = 4096;
    l.files = 12;
    l.compression = "lz4";
    l.parents = {"sha256:" + std::string(64, 'b')};
    l.config = layer::ImageConfig{{"PATH=/bin"}, "/work", {"/bin/sh"}, {}, "1000"};
    auto rec = l.to_record();
    CHECK(rec["type"] == "layer");
    auto back = layer::Layer::from_json(rec);
    REQUIRE(back);
    CHECK(back->digest == l.digest);
    CHECK(back->labels == l.labels);
    CHECK(back->parents == l.parents);
    REQUIRE(back->config);
    CHECK(back->config->workdir == "/work");
    CHECK(back->hex() == std::string(64, 'a'));
}

TEST_CASE("layer metadata with a bad digest is refused") {
    auto bad = layer::Layer::from_json({{"digest", "md5:abc"}});
    REQUIRE(!bad);
    CHECK(bad.error().code == "bad_input");
    CHECK(!layer::Layer::from_json({{"name", "x"}}));
}
