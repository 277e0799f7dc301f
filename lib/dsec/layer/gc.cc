#include "dsec/layer/gc.h"

#include <unistd.h>

#include <cerrno>

namespace dsec::layer {

namespace {
bool is_hex64(const std::string& s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

Result<std::vector<json>> collect_garbage(const Store& store, const std::set<std::string>& in_use, bool dry_run) {
    std::vector<json> out;
    auto note = [&](const char* kind, const std::string& path, const std::string& digest = {}) -> Status {
        json r = {{"type", "gc"}, {"kind", kind}, {"path", path}, {"dry_run", dry_run}};
        if (!digest.empty()) r["digest"] = digest;
        out.push_back(std::move(r));
        if (dry_run) return {};
        return fs::remove_tree(path);
    };
    if (!fs::exists(store.dir())) return out;
    auto held = store.lock();
    if (!held) return fail(held.error());

    // Staging directories: a live build holds a lock on its own; the rest are leftovers.
    auto staged = fs::list_dir(store.dir() + "/tmp");
    if (!staged) return fail(staged.error());
    for (auto& name : *staged) {
        std::string path = store.dir() + "/tmp/" + name;
        auto busy = fs::lock_dir(path, false);
        if (!busy && busy.error().code == Code::busy) continue;
        if (auto r = note("staging", path); !r) return fail(r.error());
    }

    // Loose files in the store itself.
    auto entries = fs::list_dir(store.dir());
    if (!entries) return fail(entries.error());
    std::set<std::string> images, metas;
    for (auto& e : *entries) {
        std::string path = store.dir() + "/" + e;
        if (e.find(".tmp.") != std::string::npos) {
            if (auto r = note("temp", path); !r) return fail(r.error());
        } else if (ends_with(e, ".erofs") && is_hex64(e.substr(0, e.size() - 6))) {
            images.insert(e.substr(0, 64));
        } else if (ends_with(e, ".json") && is_hex64(e.substr(0, e.size() - 5))) {
            metas.insert(e.substr(0, 64));
        }
    }
    for (auto& hex : images)
        if (!metas.count(hex))
            if (auto r = note("orphan_image", store.dir() + "/" + hex + ".erofs", "sha256:" + hex); !r)
                return fail(r.error());
    for (auto& hex : metas)
        if (!images.count(hex))
            if (auto r = note("orphan_meta", store.dir() + "/" + hex + ".json", "sha256:" + hex); !r)
                return fail(r.error());

    // Names: drop the dangling ones, and mark what the rest reach (with parents).
    auto names = store.names();
    if (!names) return fail(names.error());
    auto name_files = fs::list_dir(store.dir() + "/names");
    if (!name_files) return fail(name_files.error());
    for (auto& f : *name_files)
        if (!names->count(f))
            if (auto r = note("temp", store.dir() + "/names/" + f); !r) return fail(r.error());
    auto layers = store.all();
    if (!layers) return fail(layers.error());
    std::map<std::string, const Layer*> by_digest;
    for (auto& l : *layers) by_digest[l.digest] = &l;
    std::set<std::string> reached(in_use.begin(), in_use.end());
    std::vector<std::string> todo;
    for (auto& [name, digest] : *names) {
        if (!by_digest.count(digest)) {
            if (auto r = note("dangling_name", store.dir() + "/names/" + name, digest); !r) return fail(r.error());
            continue;
        }
        todo.push_back(digest);
    }
    for (auto& d : in_use) todo.push_back(d);
    while (!todo.empty()) {
        std::string d = todo.back();
        todo.pop_back();
        reached.insert(d);
        if (auto it = by_digest.find(d); it != by_digest.end())
            for (auto& p : it->second->parents)
                if (!reached.count(p)) todo.push_back(p);
    }
    for (auto& l : *layers) {
        if (reached.count(l.digest)) continue;
        // Metadata first, so a crash between the two leaves an orphan image, not a
        // layer whose image is gone.
        if (auto r = note("unnamed_layer", store.meta_path(l.digest), l.digest); !r) return fail(r.error());
        if (!dry_run)
            if (auto r = fs::remove_tree(store.image_path(l.digest)); !r) return fail(r.error());
    }
    if (!dry_run) (void)fs::sync_dir(store.dir());
    return out;
}

}  // namespace dsec::layer
