// Sessions and the command log: the protocol text, status lines, session ids, log records.
#include <doctest/doctest.h>

#include "dsec/sandbox/log.h"
#include "dsec/sandbox/session.h"
#include "dsec/sandbox/session_protocol.h"

using namespace dsec::sandbox;
using namespace dsec::sandbox::session_protocol;

TEST_CASE("session: a command is single-quoted whole, quotes included") {
    CHECK(single_quoted("a'b") == "'a'\\''b'");
    CHECK(single_quoted("") == "''");
    std::string s = script("echo 'x' $HOME", "n0nce");
    CHECK(s.find("command eval 'echo '\\''x'\\'' $HOME\n' </dev/null;") != std::string::npos);
    // A timeout's URG returns from the command's function, only inside it.
    CHECK(s.find("trap '[ \"${_dsec_command-}\" = 1 ] && return 137' URG\n") != std::string::npos);
    CHECK(s.find("\n_dsec_run\n") != std::string::npos);
    CHECK(s.find("trap 'printf '\\''\\nn0nce %d\\n'\\'' \"$?\" >&9' EXIT\n") == 0);
    CHECK(s.ends_with("printf '\\nn0nce %d\\n' \"$?\" >&9\n"));
    // On a terminal: stdin is the terminal, and the master the shell holds is not passed on.
    CHECK(script("tty", "n0nce", true).find("command eval 'tty\n' <&1 8>&-;") != std::string::npos);
}

TEST_CASE("session: only a whole line with the nonce is a status") {
    CHECK(find_status("\nabc 0\n", "abc") == 0);
    CHECK(find_status("junk\nabc 127\n", "abc") == 127);
    CHECK_FALSE(find_status("\nabc 0", "abc"));           // line not ended yet
    CHECK_FALSE(find_status("abc 0\n", "abc"));           // not after a newline
    CHECK_FALSE(find_status("\nxabc 0\n", "abc"));        // another nonce
    CHECK_FALSE(find_status("\nabc 1x\n", "abc"));        // not a number
    CHECK_FALSE(find_status("\nabc 1234\n", "abc"));      // out of range
    CHECK(find_status("\nabc zz\n\nabc 3\n", "abc") == 3);  // a forged line first
}

TEST_CASE("session: ids are SANDBOX@8 hex digits") {
    auto r = SessionRef::parse("box.1@0a1b2c3d");
    REQUIRE(r);
    CHECK(r->sandbox == "box.1");
    CHECK(r->key == "0a1b2c3d");
    CHECK(r->id() == "box.1@0a1b2c3d");
    CHECK_FALSE(SessionRef::parse("box"));
    CHECK_FALSE(SessionRef::parse("box@0a1b2c3"));
    CHECK_FALSE(SessionRef::parse("box@0a1b2c3z"));
    CHECK_FALSE(SessionRef::parse("../x@0a1b2c3d"));
    CHECK_FALSE(SessionRef::parse("@0a1b2c3d"));
}

TEST_CASE("log: a result's fields, output capped") {
    // Designated initializers: GCC 12 warns wrongly (-Wrestrict) about assigning literals at -O3.
    ExecResult r{.exit_code = 3, .out = std::string(kLogOutputCap + 10, 'x'), .err = std::string(1, 'e'),
                 .note = std::string(1, 'n'), .in_bytes = 2, .out_bytes = kLogOutputCap + 10, .err_bytes = 1,
                 .out_sha256 = std::string(2, 'a')};
    json rec = log_record("box", "exec");
    add_result(rec, r);
    CHECK(rec["type"] == "log");
    CHECK(rec["kind"] == "exec");
    CHECK(rec["id"] == "box");
    CHECK(rec["exit_code"] == 3);
    CHECK(rec["signal"].is_null());
    CHECK(rec["bytes_out"] == kLogOutputCap + 11);
    CHECK(rec["bytes_in"] == 2);
    CHECK(rec["stdout"].get<std::string>().size() == kLogOutputCap);
    CHECK(rec["stdout_truncated"] == true);
    CHECK_FALSE(rec.contains("stderr_truncated"));
    CHECK(rec["stdout_sha256"] == "aa");
    CHECK(rec["note"] == "n");
    CHECK(rec["time"].get<std::string>().ends_with("Z"));
}

TEST_CASE("log: a cp's record, worked or failed") {
    dsec::copy::Stats stats;
    stats.bytes = 42;
    json in = copy_log_record("box", "./src", "box:/work", true, 7, stats);
    CHECK(in["kind"] == "cp");
    CHECK(in["src"] == "./src");
    CHECK(in["dst"] == "box:/work");
    CHECK(in["bytes_in"] == 42);
    CHECK(in["exit_code"] == 0);
    CHECK(in["duration_ms"] == 7);
    dsec::Result<dsec::copy::Stats> failed = dsec::fail(dsec::make_error(dsec::Code::not_found, "gone"));
    json out = copy_log_record("box", "box:/nope", "-", false, 1, failed);
    CHECK(out["exit_code"] == 1);
    CHECK(out["error"] == "not_found");
    CHECK_FALSE(out.contains("bytes_out"));
}
