#include "dsec/bench/reclaim.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>

#include "dsec/sys/fd.h"
#include "dsec/sys/fs.h"

namespace dsec::bench {

const char* fill_name(Fill f) { return f == Fill::random ? "random" : "text"; }

Result<Fill> parse_fill(const std::string& text) {
    if (text == "text") return Fill::text;
    if (text == "random") return Fill::random;
    return fail(make_error(Code::usage, "--fill must be text or random, got \"" + text + "\""));
}

std::string touch_command(Fill fill, uint64_t shared, uint64_t own, const std::string& shared_file) {
    // dd reads its whole block (iflag=fullblock) before it writes any of it; the reader
    // takes one byte, says so and then never reads again, so dd stays blocked in its
    // write holding the block in its memory, as a process holds its heap.
    auto hold = [](const std::string& source, uint64_t bytes, const std::string& flag) {
        std::string n = std::to_string(bytes);
        return source + " | dd bs=" + n + " count=1 iflag=fullblock 2>/dev/null | "
               "{ head -c 1 > /dev/null; touch " + flag + "; exec sleep 2147483647; }";
    };
    // The seed differs per sandbox, so no two sandboxes' own halves share a page.
    std::string seed = "s=$(head -c 4 /dev/urandom | od -An -tu4 | tr -d ' '); ";
    std::string own_source = fill == Fill::random
                                 ? "head -c " + std::to_string(own) + " /dev/urandom"
                                 : "seq $((s % 100000000 * 1000)) $((s % 100000000 * 1000 + " +
                                       std::to_string(own / 4) + "))";
    std::string cmd = "rm -f /tmp/.bench-shared /tmp/.bench-own; ";
    // Each holder in the background, detached from the exec's stdio.
    auto background = [](const std::string& body) { return std::string("(").append(body).append(") < /dev/null > /dev/null 2>&1 & "); };
    cmd += shared ? background(hold("cat " + shared_file, shared, "/tmp/.bench-shared")) : "touch /tmp/.bench-shared; ";
    cmd += own ? background(seed + hold(own_source, own, "/tmp/.bench-own")) : "touch /tmp/.bench-own; ";
    cmd += "while [ ! -e /tmp/.bench-shared ] || [ ! -e /tmp/.bench-own ]; do sleep 0.05; done";
    return cmd;
}

Status write_fill(const std::string& path, Fill fill, uint64_t bytes) {
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) return fail(sys_error("open", path));
    std::string chunk;
    uint64_t next = 100000000000ULL;
    for (uint64_t done = 0; done < bytes; done += chunk.size()) {
        chunk.clear();
        size_t want = size_t(std::min<uint64_t>(bytes - done, 1 << 20));
        if (fill == Fill::random) {
            chunk.resize(want);
            for (size_t at = 0; at < want;) {
                ssize_t got = ::getrandom(chunk.data() + at, want - at, 0);
                if (got < 0 && errno != EINTR) return fail(sys_error("getrandom", path));
                if (got > 0) at += size_t(got);
            }
        } else {
            while (chunk.size() < want) chunk += std::to_string(next++) + "\n";
            chunk.resize(want);
        }
        if (auto r = fs::write_all(fd.get(), chunk, path); !r) return r;
    }
    return {};
}

bool room_for(uint64_t available, uint64_t need, uint64_t floor) {
    return available >= floor && available - floor >= need;
}

nlohmann::json KsmSettings::to_json() const {
    auto num = [](const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); };
    return {{"run", num(run)}, {"pages_to_scan", num(pages_to_scan)}, {"sleep_millisecs", num(sleep_millisecs)}};
}

Result<KsmSettings> read_ksm_settings(const std::string& dir) {
    if (!fs::exists(dir + "/run")) return fail(make_error(Code::unsupported, "the kernel has no KSM", dir));
    KsmSettings s;
    for (auto [field, name] : {std::pair{&s.run, "run"}, {&s.pages_to_scan, "pages_to_scan"},
                               {&s.sleep_millisecs, "sleep_millisecs"}}) {
        auto text = fs::read_file(dir + "/" + name);
        if (!text) return fail(text.error());
        *field = text->substr(0, text->find('\n'));
    }
    return s;
}

Status write_ksm_settings(const std::string& dir, const KsmSettings& s) {
    // The scan rate first and run last: ksmd starts (or stops) with the rate it will keep.
    for (auto [value, name] : {std::pair{&s.pages_to_scan, "pages_to_scan"}, {&s.sleep_millisecs, "sleep_millisecs"},
                               {&s.run, "run"}}) {
        if (value->empty()) continue;
        if (auto r = fs::write_text(dir + "/" + name, *value); !r) return r;
    }
    return {};
}

}  // namespace dsec::bench
