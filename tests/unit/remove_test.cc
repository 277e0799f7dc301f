// fs::remove_tree on what a sandbox can leave: very deep chains under a low descriptor
// limit and a small stack, immutable and append-only entries, symlinks and mounts.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>

#include "dsec/sys/fs.h"

using namespace dsec;

namespace {

std::string make_temp(const std::string& parent) {
    std::string templ = parent + "/dsec-remove-test.XXXXXX";
    return ::mkdtemp(templ.data()) ? templ : std::string();
}

// Runs `body` in a forked child; its exit code, or 128+N when killed by signal N.
int in_child(const std::function<int()>& body) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(body());
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Makes `depth` nested directories "d" in `dir`, one descriptor at a time.
bool make_chain(const std::string& dir, int depth) {
    Fd at(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int i = 0; at && i < depth; i++) {
        if (::mkdirat(at.get(), "d", 0755) < 0) return false;
        at = Fd(::openat(at.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    }
    return bool(at);
}

// Writes a file in place (atomic_write's rename would be refused in an append-only directory).
void put_in_place(const std::string& path, const std::string& text) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    REQUIRE(fd);
    REQUIRE(fs::write_all(fd.get(), text, path));
}

// Sets `flags` (FS_*_FL) on a file or directory; false when the filesystem refuses.
bool set_flags(const std::string& path, int add) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    int flags = 0;
    if (!fd || ::ioctl(fd.get(), FS_IOC_GETFLAGS, &flags) < 0) return false;
    flags |= add;
    return ::ioctl(fd.get(), FS_IOC_SETFLAGS, &flags) == 0;
}

// A temp directory on a filesystem that takes the immutable flag (tmpfs since 6.0,
// ext4, xfs...), or "" when neither /tmp nor /var/tmp does.
std::string temp_with_flags() {
    for (const char* parent : {"/tmp", "/var/tmp"}) {
        std::string dir = make_temp(parent);
        if (dir.empty()) continue;
        if (set_flags(dir, FS_APPEND_FL)) return dir;
        (void)fs::remove_tree(dir);
    }
    return {};
}

}  // namespace

TEST_CASE("remove_tree: a 20,000-level chain under 64 descriptors and a 1 MiB stack") {
    // On tmpfs where there is one: a disk filesystem spends ~0.1-1 ms per mkdir and rmdir.
    std::string dir = make_temp(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    REQUIRE(!dir.empty());
    REQUIRE(make_chain(dir, 20000));
    // A recursive walk needs a descriptor and a stack frame per level: it would fail (or
    // crash) here; a bounded one does not notice.
    int code = in_child([&] {
        struct rlimit files = {64, 64}, stack = {1 << 20, 1 << 20};
        if (::setrlimit(RLIMIT_NOFILE, &files) < 0 || ::setrlimit(RLIMIT_STACK, &stack) < 0) return 2;
        return fs::remove_tree(dir) ? 0 : 1;
    });
    CHECK(code == 0);
    CHECK(!fs::exists(dir));
    (void)fs::remove_tree(dir);
}

TEST_CASE("remove_tree: a wide tree with deep branches, symlinks out of it left alone") {
    std::string dir = make_temp("/tmp");
    std::string outside = make_temp("/tmp");
    REQUIRE(!dir.empty());
    REQUIRE(!outside.empty());
    put_in_place(outside + "/keep", "kept");
    REQUIRE(fs::mkdir_p(outside + "/kdir"));
    put_in_place(outside + "/kdir/f", "kept too");
    std::string tree = dir + "/t";
    for (int i = 0; i < 5; i++) {
        std::string branch = tree + "/b" + std::to_string(i);
        REQUIRE(fs::mkdir_p(branch));
        REQUIRE(make_chain(branch, 40 + i));
        put_in_place(branch + "/file", "x");
        REQUIRE(::symlink((outside + "/keep").c_str(), (branch + "/to-file").c_str()) == 0);
        REQUIRE(::symlink((outside + "/kdir").c_str(), (branch + "/to-dir").c_str()) == 0);
        REQUIRE(::symlink("/", (branch + "/to-root").c_str()) == 0);
    }
    // Symlinks far below the depth where subtrees are moved up, and a read-only directory.
    std::string deep = tree + "/b0";
    for (int i = 0; i < 30; i++) deep += "/d";
    REQUIRE(::symlink((outside + "/kdir").c_str(), (deep + "/deep-to-dir").c_str()) == 0);
    REQUIRE(::chmod((deep + "/d").c_str(), 0500) == 0);
    // A name like the ones remove_tree gives to what it moves up.
    REQUIRE(fs::mkdir_p(tree + "/.dsec-remove." + std::to_string(::getpid()) + ".0/x"));
    // The tree's top given as a symlink: the link goes, not its target.
    REQUIRE(::symlink((outside + "/kdir").c_str(), (dir + "/link").c_str()) == 0);
    REQUIRE(fs::remove_tree(dir + "/link"));
    CHECK(fs::exists(outside + "/kdir/f"));

    auto r = fs::remove_tree(tree);
    CHECK(r);
    CHECK(!fs::exists(tree));
    CHECK(*fs::read_file(outside + "/keep") == "kept");
    CHECK(*fs::read_file(outside + "/kdir/f") == "kept too");
    CHECK(fs::remove_tree(tree));  // missing: fine
    CHECK(fs::remove_tree(dir));
    CHECK(fs::remove_tree(outside));
}

TEST_CASE("remove_tree: immutable and append-only files and directories") {
    if (::geteuid() != 0) {
        MESSAGE("skipped: clearing FS_IMMUTABLE_FL needs CAP_LINUX_IMMUTABLE (root)");
        return;
    }
    std::string dir = temp_with_flags();
    if (dir.empty()) {
        MESSAGE("skipped: neither /tmp nor /var/tmp takes FS_APPEND_FL");
        return;
    }
    // dir itself is append-only already.
    put_in_place(dir + "/immutable", "i");
    put_in_place(dir + "/append", "a");
    REQUIRE(fs::mkdir_p(dir + "/idir/sub"));
    put_in_place(dir + "/idir/f", "f");
    put_in_place(dir + "/idir/sub/g", "g");
    REQUIRE(fs::mkdir_p(dir + "/adir"));
    put_in_place(dir + "/adir/h", "h");
    REQUIRE(fs::mkdir_p(dir + "/ro"));
    put_in_place(dir + "/ro/x", "x");
    REQUIRE(::mkfifo((dir + "/adir/fifo").c_str(), 0600) == 0);
    // A chain deep enough to be moved up, flagged at every level: the rename meets the
    // flags too, whatever the depth where it happens.
    REQUIRE(make_chain(dir + "/adir", 40));
    std::string deep = dir + "/adir";
    for (int i = 0; i < 40; i++) deep += "/d";
    put_in_place(deep + "/deep", "deep");
    REQUIRE(set_flags(deep + "/deep", FS_IMMUTABLE_FL));
    for (int i = 0; i < 40; i++, deep.resize(deep.size() - 2))
        REQUIRE(set_flags(deep, i % 2 ? FS_APPEND_FL : FS_IMMUTABLE_FL));

    REQUIRE(set_flags(dir + "/immutable", FS_IMMUTABLE_FL));
    REQUIRE(set_flags(dir + "/append", FS_APPEND_FL));
    REQUIRE(set_flags(dir + "/idir/f", FS_IMMUTABLE_FL));
    REQUIRE(set_flags(dir + "/idir/sub", FS_IMMUTABLE_FL));
    REQUIRE(set_flags(dir + "/idir", FS_IMMUTABLE_FL));
    REQUIRE(set_flags(dir + "/adir/h", FS_IMMUTABLE_FL | FS_APPEND_FL));
    REQUIRE(set_flags(dir + "/adir", FS_APPEND_FL));
    REQUIRE(::chmod((dir + "/ro").c_str(), 0500) == 0);
    REQUIRE(set_flags(dir + "/ro", FS_IMMUTABLE_FL));
    CHECK(::unlink((dir + "/immutable").c_str()) < 0);

    auto r = fs::remove_tree(dir);
    if (!r) MESSAGE(r.error().describe());
    CHECK(r);
    CHECK(!fs::exists(dir));
}

TEST_CASE("remove_tree: never crosses into a mount, bind mounts of the same filesystem included") {
    if (::geteuid() != 0) {
        MESSAGE("skipped: mounting needs root");
        return;
    }
    std::string dir = make_temp("/tmp");
    std::string outside = make_temp("/tmp");
    REQUIRE(!dir.empty());
    REQUIRE(!outside.empty());
    put_in_place(outside + "/keep", "kept");
    REQUIRE(make_chain(dir, 25));
    std::string deep = dir;
    for (int i = 0; i < 25; i++) deep += "/d";
    REQUIRE(fs::mkdir_p(dir + "/near"));
    // In a child with its own mount namespace: the mounts go with it.
    int code = in_child([&] {
        if (::unshare(CLONE_NEWNS) < 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) return 2;
        if (::mount(outside.c_str(), (dir + "/near").c_str(), nullptr, MS_BIND, nullptr) < 0) return 3;
        if (::mount(outside.c_str(), deep.c_str(), nullptr, MS_BIND, nullptr) < 0) return 4;
        auto r = fs::remove_tree(dir);
        if (r) return 5;
        if (r.error().err != EBUSY || r.error().op != "remove") return 6;
        if (!fs::exists(dir + "/near/keep")) return 7;
        if (::umount2((dir + "/near").c_str(), MNT_DETACH) < 0) return 8;
        return 0;
    });
    CHECK(code == 0);
    CHECK(*fs::read_file(outside + "/keep") == "kept");
    // Without the mounts, what is left goes.
    CHECK(fs::remove_tree(dir));
    CHECK(!fs::exists(dir));
    CHECK(fs::remove_tree(outside));
}
