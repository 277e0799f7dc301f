#include "dsec/mount/layers.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "dsec/mount/fscontext.h"
#include "dsec/mount/image_check.h"
#include "dsec/mount/overlay.h"
#include "dsec/sys/fs.h"
#include "dsec/sys/loop.h"

namespace dsec::mount {

namespace {

std::string hex_of(const std::string& digest) { return digest.rfind("sha256:", 0) == 0 ? digest.substr(7) : digest; }

bool is_hex64(const std::string& s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Mount table fields escape space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            out += char(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string canonical(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

}  // namespace

std::string layers_dir(const Paths& paths) { return paths.run + "/layers"; }

std::string layer_mountpoint(const Paths& paths, const std::string& digest) {
    return layers_dir(paths) + "/" + hex_of(digest);
}

std::string layer_lock_path(const Paths& paths, const std::string& digest) {
    return paths.run + "/locks/layer-" + hex_of(digest) + ".lock";
}

bool in_layers_dir(const Paths& paths, const std::string& path) {
    return canonical(path).rfind(canonical(layers_dir(paths)) + "/", 0) == 0;
}

bool is_layer_mount(const std::string& path) {
    return is_mount_root(path) && fs_magic(path) == long(EROFS_SUPER_MAGIC_V1);
}

Status prepare_layers_dir(const Paths& paths) {
    std::string dir = layers_dir(paths);
    for (auto& d : {dir, paths.run + "/locks"})
        if (auto r = fs::mkdir_p(d, 0755); !r) return r;
    // Serialized so that two first mounts do not stack two binds.
    auto held = fs::lock(paths.run + "/locks/layers.lock");
    if (!held) return fail(held.error());
    if (!is_mount_root(dir) && ::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) < 0)
        return fail(sys_error("mount --bind", dir));
    if (::mount(nullptr, dir.c_str(), nullptr, MS_PRIVATE, nullptr) < 0)
        return fail(sys_error("mount --make-private", dir));
    return {};
}

Result<Fd> mount_image(const std::string& image) {
    constexpr unsigned kAttrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
    auto ctx = FsContext::open("erofs");
    if (!ctx) return fail(ctx.error());
    if (auto r = ctx->set_string("source", image); !r) return fail(r.error());
    // The image's pages are cached by erofs itself; directio keeps a second copy of
    // them out of the page cache of the file underneath.
    if (auto r = ctx->set_flag("directio"); !r) return fail(r.error());
    auto mounted = ctx->mount(kAttrs);
    if (mounted || mounted.error().err != ENOTBLK) return mounted;
    // A store on tmpfs (or another filesystem erofs cannot read a file from): the same
    // image through a read-only loop device, which goes with the mount.
    Fd file(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file) return fail(sys_error("open", image));
    auto loop = sys::attach_loop(file.get());
    if (!loop) return fail(std::move(loop.error()).context("the store's filesystem cannot back an erofs mount (tmpfs?)"));
    auto dev = FsContext::open("erofs");
    if (!dev) return fail(dev.error());
    if (auto r = dev->set_string("source", loop->path); !r) return fail(r.error());
    if (auto r = dev->set_flag("ro"); !r) return fail(r.error());  // the device is read-only
    return dev->mount(kAttrs);
}

Result<std::string> mount_layer(const Paths& paths, const layer::Store& store, const layer::Layer& layer,
                                bool verify) {
    std::string mp = layer_mountpoint(paths, layer.digest);
    if (!is_hex64(layer.hex())) return fail(make_error(Code::bad_input, "invalid digest \"" + layer.digest + "\""));
    if (is_layer_mount(mp)) return mp;  // the common case: no lock, two syscalls
    if (auto r = prepare_layers_dir(paths); !r) return fail(r.error());
    // Whoever holds the lock mounts; the others find the mount done when they get it.
    auto held = fs::lock(layer_lock_path(paths, layer.digest));
    if (!held) return fail(held.error());
    if (is_layer_mount(mp)) return mp;
    // Checked before it goes near the kernel (image_check.h says what and when).
    auto image = open_checked_image(paths, store, layer, verify);
    if (!image) return fail(image.error());
    // The path names the mount in the mount table; past fsconfig's limit the open
    // file's /proc link stands in (erofs opens the source by path).
    std::string path = store.image_path(layer.digest);
    std::string source = path.size() <= kMaxFsconfigString ? path : "/proc/self/fd/" + std::to_string(image->get());
    auto m = mount_image(source);
    if (!m) return fail(std::move(m.error()).context("mounting " + path));
    if (::mkdir(mp.c_str(), 0755) < 0 && errno != EEXIST) return fail(sys_error("mkdir", mp));
    // The only step that commits: before it, a killed process leaves no mount behind.
    if (auto r = attach(*m, mp); !r) return fail(r.error());
    return mp;
}

Result<std::vector<MountedLayer>> mounted_layers(const Paths& paths) {
    auto table = fs::read_file("/proc/self/mountinfo");
    if (!table) return fail(table.error());
    std::string prefix = canonical(layers_dir(paths)) + "/";
    std::vector<MountedLayer> out;
    size_t pos = 0;
    while (pos < table->size()) {
        size_t end = table->find('\n', pos);
        if (end == std::string::npos) end = table->size();
        std::string line = table->substr(pos, end - pos);
        pos = end + 1;
        // "id parent maj:min root mountpoint opts [optional...] - fstype source superopts"
        std::vector<std::string> f;
        for (size_t a = 0, b; a < line.size(); a = b + 1) {
            b = line.find(' ', a);
            if (b == std::string::npos) b = line.size();
            f.push_back(line.substr(a, b - a));
        }
        auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 5 || dash == f.end() || f.end() - dash < 3 || dash[1] != "erofs") continue;
        std::string mp = unescape(f[4]);
        if (mp.rfind(prefix, 0) != 0 || !is_hex64(mp.substr(prefix.size()))) continue;
        MountedLayer m{"sha256:" + mp.substr(prefix.size()), layer_mountpoint(paths, mp.substr(prefix.size())),
                       unescape(dash[2])};
        // A later line for the same mountpoint is mounted on top: it is the one seen.
        std::erase_if(out, [&](const MountedLayer& o) { return o.digest == m.digest; });
        out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.digest < b.digest; });
    return out;
}

Status unmount_layer(const Paths& paths, const std::string& digest) {
    std::string mp = layer_mountpoint(paths, digest);
    if (!fs::exists(mp)) return {};
    auto held = fs::lock(layer_lock_path(paths, digest));
    if (!held) return fail(held.error());
    if (is_layer_mount(mp) && ::umount2(mp.c_str(), UMOUNT_NOFOLLOW) < 0) return fail(sys_error("umount", mp));
    // An empty mountpoint left behind would read as an empty layer: remove it.
    if (::rmdir(mp.c_str()) < 0 && errno != ENOENT) return fail(sys_error("rmdir", mp));
    return {};
}

}  // namespace dsec::mount
