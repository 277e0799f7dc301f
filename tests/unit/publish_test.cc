#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include "dsec/layer/publish.h"
#include "dsec/sys/fs.h"

using namespace dsec;

namespace {
// A layer in `store` whose image is `bytes` (publish_to copies and hashes; it never
// mounts, so any bytes do).
layer::Layer put(const layer::Store& store, const std::string& name, const std::string& bytes) {
    auto staging = store.staging("t-");
    REQUIRE(staging);
    std::string file = staging->path() + "/img";
    REQUIRE(fs::atomic_write(file, bytes));
    layer::Layer l;
    l.name = name;
    auto done = store.publish(file, l);
    REQUIRE(done);
    return *done;
}
}  // namespace

TEST_CASE("publish_to copies a layer once, names it, and refuses a source that does not match its digest") {
    auto dir = fs::TempDir::make("/tmp", "dsec-publish-");
    REQUIRE(dir);
    layer::Store a(dir->path() + "/a"), b(dir->path() + "/b"), shared(dir->path() + "/shared");
    auto la = put(a, "base", std::string(300000, 'x'));
    auto lb = put(b, "base", std::string(300000, 'x'));
    REQUIRE(la.digest == lb.digest);

    auto first = layer::publish_to(a, la, shared, "base");
    REQUIRE(first);
    CHECK(first->copied);
    CHECK(first->layer.digest == la.digest);
    auto got = shared.resolve("base");
    REQUIRE(got);
    CHECK(got->digest == la.digest);
    CHECK(got->size == 300000);

    // The same content from the other node: no second copy, one layer, a new name.
    auto second = layer::publish_to(b, lb, shared, "base-b");
    REQUIRE(second);
    CHECK(!second->copied);
    auto all = shared.all();
    REQUIRE(all);
    CHECK(all->size() == 1);
    CHECK(shared.names()->size() == 2);
    CHECK(fs::list_dir(shared.dir() + "/tmp")->empty());

    // A source image changed behind its digest is not published.
    auto lc = put(a, "other", "abc");
    REQUIRE(fs::atomic_write(a.image_path(lc.digest), "abd"));
    auto bad = layer::publish_to(a, lc, shared, "other");
    REQUIRE(!bad);
    CHECK(bad.error().code == Code::corrupt);
    CHECK(!shared.resolve("other"));
    CHECK(shared.all()->size() == 1);
    CHECK(fs::list_dir(shared.dir() + "/tmp")->empty());
}
