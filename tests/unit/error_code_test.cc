// Error codes: a closed set with one name table; records carry the names.
#include <doctest/doctest.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

using namespace dsec;

TEST_CASE("error codes: every code round-trips through its name, and names are unique") {
    std::vector<std::string_view> seen;
    for (int i = 0; i <= int(Code::mount_failed); i++) {
        Code c = Code(i);
        std::string_view name = code_name(c);
        CHECK_FALSE(name.empty());
        CHECK(std::find(seen.begin(), seen.end(), name) == seen.end());
        seen.push_back(name);
        auto back = code_from_name(name);
        REQUIRE(back);
        CHECK(*back == c);
    }
    CHECK(code_name(Code::bad_input) == "bad_input");
    CHECK(code_name(Code::unsupported_version) == "unsupported_version");
    CHECK_FALSE(code_from_name("no_such_code"));
    CHECK_FALSE(code_from_name(""));
}

TEST_CASE("error codes: records print the name; unknown names read back as io") {
    Error e = make_error(Code::not_running, "sandbox \"b\" is not running", "b");
    auto rec = e.to_record();
    CHECK(rec["code"] == "not_running");
    auto fields = e.to_fields();
    CHECK(fields["code"] == "not_running");
    CHECK(Error::from_fields(fields).code == Code::not_running);
    CHECK(Error::from_fields(nlohmann::json{{"code", "from_the_future"}}).code == Code::io);
    CHECK(Error::from_fields(nlohmann::json::object()).code == Code::io);
    CHECK(errno_error(ENOSPC, "write").code == Code::no_space);
    CHECK(errno_error(ENOENT, "open").to_record()["code"] == "not_found");
}
