#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsec/layer/oci.h"
#include "dsec/layer/safe_tree.h"

using namespace dsec;
using nlohmann::json;

TEST_CASE("archive paths: normalized, or refused when they leave the tree") {
    CHECK(layer::clean_path("./a//b/").value() == "a/b");
    CHECK(layer::clean_path("./").value() == "");
    CHECK(layer::clean_path("a/./b").value() == "a/b");
    CHECK(layer::clean_path("...").value() == "...");  // a name, not a parent
    CHECK(layer::clean_path("a..b/c").value() == "a..b/c");
    for (const char* bad : {"../x", "a/../../x", "a/..", "/etc/passwd", "//x"}) {
        auto r = layer::clean_path(bad);
        REQUIRE(!r);
        CHECK(r.error().code == Code::bad_input);
    }
    CHECK(!layer::clean_path(std::string(256, 'n')));
    CHECK(layer::clean_path(std::string(255, 'n')));
    std::string deep;
    while (deep.size() <= 4096) deep += "dir/";
    CHECK(!layer::clean_path(deep));
}

TEST_CASE("leaf and parent of a clean path") {
    CHECK(layer::leaf_of("a/b/c") == "c");
    CHECK(layer::parent_of("a/b/c") == "a/b");
    CHECK(layer::leaf_of("c") == "c");
    CHECK(layer::parent_of("c") == "");
}

TEST_CASE("blob paths come only from well-formed sha256 digests") {
    std::string hex(64, 'a');
    CHECK(layer::blob_path("sha256:" + hex).value() == "blobs/sha256/" + hex);
    CHECK(!layer::blob_path("sha512:" + hex));
    CHECK(!layer::blob_path("sha256:../../etc/passwd"));
    CHECK(!layer::blob_path("sha256:" + std::string(64, 'A')));
    CHECK(!layer::blob_path(""));
}

TEST_CASE("picking a manifest from an OCI index") {
    json index = {{"manifests",
                   {{{"digest", "sha256:1"}, {"platform", {{"os", "linux"}, {"architecture", "amd64"}}}},
                    {{"digest", "sha256:2"},
                     {"platform", {{"os", "linux"}, {"architecture", "arm64"}, {"variant", "v8"}}}}}}};
    CHECK(layer::pick_manifest(index, "").value()["digest"] == "sha256:1");
    CHECK(layer::pick_manifest(index, "linux/arm64").value()["digest"] == "sha256:2");
    CHECK(layer::pick_manifest(index, "linux/arm64/v8").value()["digest"] == "sha256:2");
    auto none = layer::pick_manifest(index, "linux/s390x");
    REQUIRE(!none);
    CHECK(none.error().code == Code::not_found);
    CHECK(!layer::pick_manifest(json{{"manifests", json::array()}}, ""));
    CHECK(!layer::pick_manifest(json::array(), ""));
}

TEST_CASE("image config: the fields a sandbox starts with, wrong types ignored") {
    json c = {{"Env", {"PATH=/bin", "A=b"}}, {"WorkingDir", "/work"}, {"Entrypoint", {"/bin/sh"}},
              {"Cmd", {"-c", "true"}},       {"User", "1000:1000"},   {"Labels", {{"x", "y"}}}};
    auto cfg = layer::parse_image_config(c);
    REQUIRE(cfg);
    CHECK(cfg->env == std::vector<std::string>{"PATH=/bin", "A=b"});
    CHECK(cfg->workdir == "/work");
    CHECK(cfg->entrypoint == std::vector<std::string>{"/bin/sh"});
    CHECK(cfg->cmd == std::vector<std::string>{"-c", "true"});
    CHECK(cfg->user == "1000:1000");
    auto odd = layer::parse_image_config(json{{"Env", "not-a-list"}, {"Cmd", nullptr}, {"User", 5}});
    REQUIRE(odd);
    CHECK(odd->empty());
    CHECK(!layer::parse_image_config(json::array()));
}

TEST_CASE("a safe tree never resolves through a symlink and creates missing parents") {
    char tmpl[] = "/tmp/dsec-unit-tree.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string root = tmpl;
    REQUIRE(::symlink("/etc", (root + "/l").c_str()) == 0);
    auto tree = layer::SafeTree::open(root);
    REQUIRE(tree);
    auto through = tree->dir("l");
    REQUIRE(!through);
    CHECK(through.error().code == Code::bad_input);
    CHECK(!tree->dir("l/x"));
    CHECK(!tree->open_existing("l"));
    auto made = tree->dir("a/b");
    REQUIRE(made);
    CHECK(layer::SafeTree::type_at(tree->root_fd(), "a") == S_IFDIR);
    auto missing = tree->open_existing("nothing");
    REQUIRE(missing);
    CHECK(!*missing);
    CHECK(tree->remove(tree->root_fd(), "a").value());
    CHECK(!tree->remove(tree->root_fd(), "a").value());
    CHECK(tree->remove(tree->root_fd(), "l").value());
    CHECK(::rmdir(root.c_str()) == 0);
}
