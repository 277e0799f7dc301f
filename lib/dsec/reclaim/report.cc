#include "dsec/reclaim/report.h"

#include <sys/stat.h>

namespace dsec::reclaim {

json event(const std::string& what, const std::string& id) {
    json e = {{"type", "event"}, {"v", 1}, {"event", what}};
    if (!id.empty()) e["id"] = id;
    return e;
}

int64_t age_s(const std::string& path, int64_t now, Since since) {
    struct stat st;
    if (::lstat(path.c_str(), &st) < 0) return -1;
    return now - int64_t(since == Since::changed ? st.st_ctim.tv_sec : st.st_mtim.tv_sec);
}

}  // namespace dsec::reclaim
