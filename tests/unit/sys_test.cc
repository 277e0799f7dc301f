#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"
#include "dsec/sys/fdpass.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/sha256.h"
#include "dsec/cli/table.h"

using namespace dsec;

TEST_CASE("sha256 matches the FIPS 180-4 vectors") {
    Sha256 empty;
    CHECK(empty.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    Sha256 abc;
    abc.update("abc");
    CHECK(abc.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    Sha256 two_blocks;
    two_blocks.update("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
    CHECK(two_blocks.hex() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sha256 gives the same digest however the input is split") {
    std::string data(1000, 'x');
    for (size_t i = 0; i < data.size(); i++) data[i] = char(i * 7);
    Sha256 whole;
    whole.update(data);
    Sha256 pieces;
    for (size_t i = 0; i < data.size(); i += 13) pieces.update(data.substr(i, 13));
    CHECK(whole.hex() == pieces.hex());
}

TEST_CASE("an error renders as a record with errno and name, and as a human line") {
    Error e = errno_error(ENOENT, "open", "/nope");
    e = std::move(e).context("reading layer");
    auto r = e.to_record();
    CHECK(r["type"] == "error");
    CHECK(r["v"] == 1);
    CHECK(r["code"] == "not_found");
    CHECK(r["errno"] == ENOENT);
    CHECK(r["errno_name"] == "ENOENT");
    CHECK(r["path"] == "/nope");
    CHECK(e.describe() == "open /nope: reading layer: No such file or directory");
}

TEST_CASE("atomic_write replaces content and leaves no temp file") {
    char templ[] = "/tmp/dsec-unit.XXXXXX";
    REQUIRE(::mkdtemp(templ));
    std::string dir = templ;
    REQUIRE(fs::atomic_write(dir + "/f", "one"));
    REQUIRE(fs::atomic_write(dir + "/f", "two"));
    CHECK(*fs::read_file(dir + "/f") == "two");
    CHECK(fs::list_dir(dir)->size() == 1);
    CHECK(fs::read_file(dir + "/missing").error().code == Code::not_found);
    REQUIRE(fs::mkdir_p(dir + "/a/b/c"));
    CHECK(fs::exists(dir + "/a/b/c"));
    REQUIRE(fs::remove_tree(dir));
    CHECK(!fs::exists(dir));
}

TEST_CASE("write_once makes a file once, whole, with its mode, and never replaces it") {
    for (const char* base : {"/tmp", "/dev/shm"}) {  // ext4 or whatever /tmp is, and a tmpfs
        auto dir = fs::TempDir::make(base, "dsec-unit.");
        REQUIRE(dir);
        std::string f = dir->path() + "/f";
        mode_t old_mask = ::umask(077);
        auto made = fs::write_once(f, "one", 0644);
        ::umask(old_mask);
        REQUIRE(made);
        CHECK(*made);
        struct stat first = {}, later = {};
        REQUIRE(::stat(f.c_str(), &first) == 0);
        CHECK((first.st_mode & 07777) == 0644);
        auto again = fs::write_once(f, "two", 0600);
        REQUIRE(again);
        CHECK_FALSE(*again);
        REQUIRE(::stat(f.c_str(), &later) == 0);
        CHECK(later.st_ino == first.st_ino);
        CHECK(*fs::read_file(f) == "one");
        CHECK(fs::list_dir(dir->path())->size() == 1);  // no temporary left
        auto missing = fs::write_once(dir->path() + "/no/such/dir/f", "x");
        REQUIRE_FALSE(missing);
        CHECK(missing.error().err == ENOENT);
    }
}

TEST_CASE("a second exclusive lock is refused while the first is held") {
    char templ[] = "/tmp/dsec-unit.XXXXXX";
    REQUIRE(::mkdtemp(templ));
    std::string dir = templ;
    {
        auto first = fs::lock(dir + "/lock");
        REQUIRE(first);
        auto second = fs::try_lock(dir + "/lock");
        REQUIRE(!second);
        CHECK(second.error().code == Code::busy);
    }
    CHECK(fs::try_lock(dir + "/lock"));
    REQUIRE(fs::remove_tree(dir));
}

TEST_CASE("ls tables: aligned columns, human sizes and ages") {
    cli::Table t({"ID", "STATE", "MEM"});
    t.add({"a", "running", cli::human_bytes(1536)});
    t.add({"longer-id", "paused", cli::human_bytes(0)});
    CHECK(t.render() == "ID         STATE    MEM\na          running  1.5K\nlonger-id  paused   0\n");
    CHECK(cli::human_bytes(50u << 20) == "50M");
    CHECK(cli::human_bytes(1023) == "1023");
    CHECK(cli::human_age(42) == "42s");
    CHECK(cli::human_age(600) == "10m");
    CHECK(cli::human_age(3 * 86400) == "3d");
}

TEST_CASE("send_fds and recv_fd pass the first descriptor with the data and close the rest") {
    int sv[2], p[2], q[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(q, O_CLOEXEC | O_NONBLOCK) == 0);  // a leaked writer fails the read below, not hangs it
    char hello[] = "hi", tail[] = "!";
    struct iovec iov[2] = {{hello, 2}, {tail, 1}};
    int fds[2] = {p[0], q[1]};
    REQUIRE(dsec::send_fds(sv[0], iov, 2, fds, 2) == 3);
    // Our copies go: the received first one must stand on its own, and the second, closed
    // by recv_fd, must leave q's read end with no writer.
    ::close(p[0]);
    ::close(q[1]);
    char buf[8] = {};
    dsec::Fd got;
    CHECK(dsec::recv_fd(sv[1], buf, sizeof buf, got) == 3);
    CHECK(std::string(buf, 3) == "hi!");
    REQUIRE(got);
    CHECK((::fcntl(got.get(), F_GETFD) & FD_CLOEXEC) != 0);
    REQUIRE(::write(p[1], "x", 1) == 1);
    char c = 0;
    CHECK(::read(got.get(), &c, 1) == 1);
    CHECK(c == 'x');
    CHECK(::read(q[0], &c, 1) == 0);  // EOF: no writer left anywhere
    // Without descriptors: data only, and the receiver gets none.
    REQUIRE(dsec::send_fds(sv[0], iov, 1, nullptr, 0) == 2);
    dsec::Fd none;
    CHECK(dsec::recv_fd(sv[1], buf, sizeof buf, none) == 2);
    CHECK(!none);
    // More than a message carries: refused before sending.
    CHECK(dsec::send_fds(sv[0], iov, 1, fds, dsec::kMaxFdsPerMessage + 1) == -1);
    CHECK(errno == EINVAL);
    // EOF once the peer has gone.
    ::close(sv[0]);
    CHECK(dsec::recv_fd(sv[1], buf, sizeof buf, none) == 0);
    ::close(sv[1]);
    ::close(p[1]);
    ::close(q[0]);
}
