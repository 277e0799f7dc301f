#include "dsec/copy/guard.h"

#include <sys/stat.h>
#include <unistd.h>

#include "dsec/layer/safe_tree.h"

namespace dsec::copy {

namespace {
constexpr struct {
    unsigned bit;
    const char* name;
} kStrippable[] = {{04000, "setuid"}, {02000, "setgid"}, {01000, "sticky"}};

uint64_t number(const nlohmann::json& r, const char* key) {
    return r.contains(key) && r[key].is_number_unsigned() ? r[key].get<uint64_t>() : 0;
}
}  // namespace

void Notes::add(std::string path, std::string what) {
    total++;
    if (listed.size() < kMaxListed) listed.push_back({std::move(path), std::move(what)});
}

void Notes::merge(const Notes& other) {
    for (auto& n : other.listed)
        if (listed.size() < kMaxListed) listed.push_back(n);
    total += other.total;
}

nlohmann::json Notes::to_json() const {
    auto list = nlohmann::json::array();
    for (auto& n : listed) list.push_back({{"path", n.path}, {"what", n.what}});
    return list;
}

Notes Notes::from_json(const nlohmann::json& list, uint64_t total) {
    Notes notes;
    if (list.is_array())
        for (auto& n : list)
            if (n.is_object() && n.value("path", nlohmann::json()).is_string() &&
                n.value("what", nlohmann::json()).is_string() && notes.listed.size() < kMaxListed)
                notes.listed.push_back({n["path"].get<std::string>(), n["what"].get<std::string>()});
    notes.total = std::max<uint64_t>(total, notes.listed.size());
    return notes;
}

void Stats::annotate(nlohmann::json& r) const {
    r["entries"] = entries;
    r["bytes"] = bytes;
    r["skipped"] = skipped.to_json();
    r["skipped_total"] = skipped.total;
    r["neutralized"] = neutralized.to_json();
    r["neutralized_total"] = neutralized.total;
}

Stats Stats::from_record(const nlohmann::json& r) {
    Stats s;
    if (!r.is_object()) return s;
    s.entries = number(r, "entries");
    s.bytes = number(r, "bytes");
    s.skipped = Notes::from_json(r.value("skipped", nlohmann::json()), number(r, "skipped_total"));
    s.neutralized = Notes::from_json(r.value("neutralized", nlohmann::json()), number(r, "neutralized_total"));
    return s;
}

const char* special_name(unsigned mode) {
    switch (mode & S_IFMT) {
        case S_IFCHR: return "character device";
        case S_IFBLK: return "block device";
        case S_IFIFO: return "fifo";
        case S_IFSOCK: return "socket";
        default: return "unknown type";
    }
}

Error too_large(const std::string& what, uint64_t cap, const char* option, const std::string& path) {
    return make_error(Code::too_large, "the copy holds more than " + std::to_string(cap) + " " + what + " (" + option + ")",
                      path);
}

Result<std::string> Guard::clean(const std::string& raw) const {
    auto path = layer::clean_path(raw);
    if (!path) return fail(path.error());
    if (path->empty() || policy_.top.empty()) return path;
    auto slash = path->find('/');
    return policy_.top + (slash == std::string::npos ? "" : path->substr(slash));
}

Status Guard::count_entry(const std::string& path) {
    if (++seen_ > limits_.max_entries) return fail(too_large("entries", limits_.max_entries, "--max-entries", path));
    return {};
}

Status Guard::skip(const std::string& raw_path, const std::string& what) {
    auto path = clean(raw_path);
    std::string shown = path ? *path : raw_path;
    if (auto r = count_entry(shown); !r) return r;
    stats_.skipped.add(shown, what);
    return {};
}

Status Guard::add(const Entry& in) {
    if (file_left_) return fail(bad_input("an entry starts before the previous file's data ended", file_path_));
    auto path = clean(in.path);
    if (!path) return fail(path.error());
    if (path->empty()) return {};  // "./": the destination itself, left as it is
    if (auto r = count_entry(*path); !r) return r;
    Entry e = in;
    e.path = *path;
    e.mode &= 07777;
    // A symlink's mode means nothing, a hard link's is its target's (noted there).
    for (auto& s : kStrippable)
        if ((e.kind == Kind::file || e.kind == Kind::dir) && (e.mode & s.bit & policy_.strip)) {
            e.mode &= ~s.bit;
            stats_.neutralized.add(e.path, s.name);
        }
    if (!policy_.keep_owners) {
        e.uid = uint32_t(::geteuid());
        e.gid = uint32_t(::getegid());
    }
    switch (e.kind) {
        case Kind::file:
            if (e.size > limits_.max_bytes - stats_.bytes)
                return fail(too_large("bytes", limits_.max_bytes, "--max-bytes", e.path));
            break;
        case Kind::symlink:
            if (e.target.empty()) return fail(bad_input("symlink without a target", e.path));
            if (e.target.size() >= layer::kMaxPath) return fail(bad_input("symlink target longer than 4095 bytes", e.path));
            break;
        case Kind::hardlink: {
            auto target = clean(e.target);
            if (!target) return fail(std::move(target.error()).context("hard link " + e.path));
            if (!files_.count(*target))
                return fail(bad_input("hard link to \"" + e.target + "\", which is not a file this copy wrote", e.path));
            e.target = *target;
            e.size = 0;
            break;
        }
        case Kind::dir: break;
    }
    if (auto r = next_.add(e); !r) return r;
    stats_.entries++;
    if (e.kind == Kind::file) {
        files_.insert(e.path);
        file_left_ = e.size;
        file_path_ = e.path;
        stats_.bytes += e.size;
    }
    return {};
}

Status Guard::data(const char* bytes, size_t n) {
    if (n > file_left_) return fail(bad_input("more data than the file's size", file_path_));
    file_left_ -= n;
    return next_.data(bytes, n);
}

Status Guard::end_file() {
    if (file_left_) return fail(bad_input("the file's data ended early", file_path_));
    return next_.end_file();
}

}  // namespace dsec::copy
