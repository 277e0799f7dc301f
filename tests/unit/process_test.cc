#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "dsec/ns/confine.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/process.h"

using namespace dsec;

namespace {

// A /proc/<pid>/stat line with `comm` as the command name, state S, ppid 1, group 7,
// session 9 and start time 123456 in field 22.
std::string stat_line(const std::string& comm) {
    return "4242 (" + comm + ") S 1 7 9 34816 4242 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 200 "
           "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
}

}  // namespace

TEST_CASE("/proc/<pid>/stat parses from the command name's last parenthesis") {
    for (std::string comm : {"sh", "a b", "x) S 2 3 4 (y", "(", ")"}) {
        CAPTURE(comm);
        auto s = proc::parse_stat(stat_line(comm));
        REQUIRE(s);
        CHECK(s->state == 'S');
        CHECK(s->ppid == 1);
        CHECK(s->pgrp == 7);
        CHECK(s->session == 9);
        CHECK(s->start == 123456);
    }
}

TEST_CASE("a stat line cut short or garbled does not parse") {
    std::string whole = stat_line("sh");
    CHECK_FALSE(proc::parse_stat(""));
    CHECK_FALSE(proc::parse_stat("4242 sh S 1 7 9"));        // no parentheses
    CHECK_FALSE(proc::parse_stat("4242 (sh) S 1 7"));         // ends before the session
    CHECK_FALSE(proc::parse_stat(whole.substr(0, whole.find(" 123456"))));  // ends before the start time
    CHECK_FALSE(proc::parse_stat("4242 (sh) S one 7 9"));     // a number that is not one
    CHECK_FALSE(proc::parse_stat("4242 (sh) SS 1 7 9"));      // a state of two letters
}

TEST_CASE("this process is alive with its own start time and dead with another") {
    int self = ::getpid();
    unsigned long long start = proc::process_start(self);
    CHECK(start > 0);
    CHECK(proc::process_alive(self, 0));
    CHECK(proc::process_alive(self, start));
    CHECK_FALSE(proc::process_alive(self, start + 1));
    CHECK(proc::session_of(self) == ::getsid(0));
    CHECK_FALSE(proc::process_alive(0, 0));
    CHECK_FALSE(proc::process_alive(-1, 0));
    CHECK(proc::process_start(-1) == 0);
}

TEST_CASE("a zombie counts as dead, a reaped pid is gone") {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) ::_exit(0);
    // Until reaped the child is a zombie: it exists but runs nothing.
    for (int i = 0; i < 500; i++) {
        auto s = proc::read_stat(child);
        if (s && s->state == 'Z') break;
        ::usleep(2000);
    }
    unsigned long long start = proc::process_start(child);
    CHECK(start > 0);
    CHECK_FALSE(proc::process_alive(child, start));
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK_FALSE(proc::read_stat(child));
    CHECK(proc::process_start(child) == 0);
    CHECK(proc::session_of(child) == 0);
}

TEST_CASE("status_field finds a named line, first or last, and only a whole name") {
    std::string_view text = "Name:\tdsec-run\nUmask:\t0022\nPid:\t42\nPPid:\t1\nNSpid:\t42 7 1\nTracerPid: 0";
    CHECK(proc::status_field(text, "Name") == "dsec-run");
    CHECK(proc::status_field(text, "Umask") == "0022");
    CHECK(proc::status_field(text, "Pid") == "42");  // not PPid's, not NSpid's
    CHECK(proc::status_field(text, "NSpid") == "42 7 1");
    CHECK(proc::status_field(text, "TracerPid") == "0");  // the last line, no newline after it
    CHECK_FALSE(proc::status_field(text, "Tgid"));
    CHECK_FALSE(proc::status_field(text, "Pi"));
    CHECK(proc::status_field("Pss:          \n", "Pss") == "");
    CHECK_FALSE(proc::status_field("", "Pid"));
    // The live file: our own pid, as the kernel writes it.
    auto self = dsec::fs::read_file("/proc/self/status");
    REQUIRE(self);
    CHECK(proc::status_field(*self, "Pid") == std::to_string(::getpid()));
}

TEST_CASE("dsec_fd_path names what a descriptor has open, and keeps errno") {
    char dir[] = "/tmp/dsec-fdpath.XXXXXX";
    REQUIRE(::mkdtemp(dir));
    std::string file = std::string(dir) + "/cgroup.procs";
    int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    char buf[192];
    errno = EPERM;
    CHECK(std::string(dsec_fd_path(fd, buf, sizeof buf)) == file);
    CHECK(errno == EPERM);
    // Too small: cut short, still terminated.
    char small[8];
    CHECK(std::string(dsec_fd_path(fd, small, sizeof small)) == file.substr(0, 7));
    ::close(fd);
    // Not open: empty, errno as it was.
    errno = EPERM;
    CHECK(std::string(dsec_fd_path(fd, buf, sizeof buf)).empty());
    CHECK(errno == EPERM);
    ::unlink(file.c_str());
    ::rmdir(dir);
}
