#include <doctest/doctest.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

using namespace dsec;

TEST_CASE("context added on the way up stays apart from the message") {
    Error e = std::move(errno_error(ENOENT, "open", "/store/x.erofs").context("reading layer")).context("building image");
    CHECK(e.message.empty());
    CHECK(e.steps == std::vector<std::string>{"building image", "reading layer"});
    CHECK(e.detail() == "building image: reading layer");
    // People read one line with all of it, in the order it happened.
    CHECK(e.describe() == "open /store/x.erofs: building image: reading layer: No such file or directory");

    auto r = e.to_record();
    CHECK(r["context"] == nlohmann::json{"building image", "reading layer"});
    CHECK(r["message"] == e.describe());
    CHECK(r["op"] == "open");
    CHECK(r["path"] == "/store/x.erofs");
    CHECK(r["errno_name"] == "ENOENT");
    CHECK_FALSE(r.contains("field"));
}

TEST_CASE("an error without context or field carries neither in its record") {
    auto r = make_error(Code::busy, "held").to_record();
    CHECK(r["message"] == "held");
    CHECK_FALSE(r.contains("context"));
    CHECK_FALSE(r.contains("field"));
}

TEST_CASE("the field at fault is named once, in its own record field") {
    Error e = make_error(Code::bad_input, "policy: limits.pids: not a number").in_field("limits.pids").in_field("other");
    CHECK(e.field == "limits.pids");
    auto r = std::move(e).context("loading policy").to_record();
    CHECK(r["field"] == "limits.pids");
    CHECK(r["code"] == "bad_input");
    CHECK(r["message"] == "loading policy: policy: limits.pids: not a number");
}

TEST_CASE("context and field cross processes with the rest of the error") {
    Error e = std::move(errno_error(EACCES, "openat", "etc").about("sb1").in_field("files[0]")).context("applying the policy");
    Error back = Error::from_fields(nlohmann::json::parse(e.to_fields().dump()));
    CHECK(back.code == Code::permission);
    CHECK(back.err == EACCES);
    CHECK(back.id == "sb1");
    CHECK(back.field == "files[0]");
    CHECK(back.steps == e.steps);
    CHECK(back.describe() == e.describe());
    // A context of the wrong shape is dropped, not a reason to lose the error.
    Error odd = Error::from_fields({{"code", "busy"}, {"message", "m"}, {"context", "not a list"}, {"field", 3}});
    CHECK(odd.code == Code::busy);
    CHECK(odd.steps.empty());
    CHECK(odd.field.empty());
    CHECK(Error::from_fields({{"context", {"a", 1, "b"}}}).steps == std::vector<std::string>{"a", "b"});
}
