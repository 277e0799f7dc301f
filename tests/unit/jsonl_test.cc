#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "dsec/json/jsonl.h"

using namespace dsec;

namespace {
// A FILE* over a string, for feeding a Reader.
std::FILE* input(const char* text) { return ::fmemopen(const_cast<char*>(text), std::strlen(text), "r"); }

// The error a Reader gives for `text` as its first line (which must be refused).
Error first_refused(const char* text) {
    std::FILE* in = input(text);
    jsonl::Reader reader(in);
    auto bad = reader.next();
    std::fclose(in);
    REQUIRE(!bad);
    return bad.error();
}
}  // namespace

TEST_CASE("reader yields objects, skips blank lines, ends with nullopt") {
    std::FILE* in = input("{\"type\":\"layer\",\"v\":1}\n\n  \n{\"type\":\"rootfs\",\"v\":1}\n");
    jsonl::Reader reader(in);
    auto a = reader.next();
    REQUIRE(a);
    REQUIRE(a->has_value());
    CHECK((**a)["type"] == "layer");
    auto b = reader.next();
    REQUIRE(b);
    CHECK((**b)["type"] == "rootfs");
    CHECK(reader.line() == 4);
    auto end = reader.next();
    REQUIRE(end);
    CHECK(!end->has_value());
    std::fclose(in);
}

TEST_CASE("a malformed line is an error naming its line number") {
    std::FILE* in = input("{\"type\":\"layer\"}\n{not json\n");
    jsonl::Reader reader(in);
    REQUIRE(reader.next());
    auto bad = reader.next();
    REQUIRE(!bad);
    CHECK(bad.error().code == Code::bad_input);
    CHECK(bad.error().message.find("line 2") != std::string::npos);
    std::fclose(in);
}

TEST_CASE("a JSON value that is not an object is refused") {
    CHECK(first_refused("[1,2,3]\n").message.find("bare id") == std::string::npos);
}

TEST_CASE("a bare id on stdin is refused with a hint: ids go as arguments") {
    // dsec-run ls -q | dsec-run destroy
    Error bad = first_refused("0add9a69bd03\n");
    CHECK(bad.code == Code::bad_input);
    CHECK(bad.message.find("\"0add9a69bd03\" looks like a bare id or name") != std::string::npos);
    CHECK(bad.message.find("xargs") != std::string::npos);
}

TEST_CASE("an upstream error record is passed through unchanged and remembered") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const char* err = "{\"type\":\"error\",\"v\":1,\"code\":\"not_found\",\"message\":\"x\"}";
    std::string text = std::string(err) + "\n{\"type\":\"layer\",\"v\":1}\n";
    std::FILE* in = input(text.c_str());
    jsonl::Reader reader(in, fds[1]);
    CHECK(!jsonl::upstream_failed());
    auto r = reader.next();
    REQUIRE(r);
    REQUIRE(r->has_value());
    CHECK((**r)["type"] == "layer");
    CHECK(jsonl::upstream_failed());
    char buf[256] = {};
    ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
    CHECK(std::string(buf, size_t(n)) == std::string(err) + "\n");
    ::close(fds[0]);
    ::close(fds[1]);
    std::fclose(in);
}

TEST_CASE("get_string names the missing field") {
    auto r = jsonl::get_string({{"id", 3}}, "id");
    REQUIRE(!r);
    CHECK(r.error().message.find("\"id\"") != std::string::npos);
    CHECK(*jsonl::get_string({{"id", "a"}}, "id") == "a");
}

TEST_CASE("a record newer than this build reads is refused, naming the version and the line") {
    std::FILE* in = input("{\"type\":\"rootfs\",\"v\":1}\n{\"type\":\"rootfs\",\"v\":2}\n{\"type\":\"rootfs\",\"v\":\"1\"}\n");
    jsonl::Reader reader(in);
    REQUIRE(reader.next());
    auto newer = reader.next();
    REQUIRE(!newer);
    CHECK(newer.error().code == Code::unsupported_version);
    CHECK(newer.error().message.find("line 2") != std::string::npos);
    CHECK(newer.error().message.find("version 2") != std::string::npos);
    auto text = reader.next();
    REQUIRE(!text);
    CHECK(text.error().code == Code::bad_input);
    std::fclose(in);
}

TEST_CASE("a record's line starts with type, id and v; the rest follow in key order") {
    nlohmann::json rec = {{"zeta", 1}, {"id", "sb1"}, {"alpha", {{"b", 2}, {"a", 1}}}, {"type", "sandbox"}};
    CHECK(jsonl::line_of(rec) == R"({"type":"sandbox","id":"sb1","v":1,"alpha":{"a":1,"b":2},"zeta":1})");
    CHECK(jsonl::line_of({{"v", 1}, {"code", "io"}}) == R"({"v":1,"code":"io"})");
    // The line is the same record again.
    rec["v"] = 1;
    CHECK(nlohmann::json::parse(jsonl::line_of(rec)) == rec);
}

TEST_CASE("an error names the item it concerns once, and carries it across processes") {
    Error e = make_error(Code::busy, "in use", "/some/path");
    e = std::move(e).about("sb1");
    e = std::move(e).about("sb2");
    CHECK(e.id == "sb1");
    CHECK(e.to_record()["id"] == "sb1");
    CHECK(Error::from_fields(e.to_fields()).id == "sb1");
    CHECK(!make_error(Code::io, "x").to_record().contains("id"));
}
