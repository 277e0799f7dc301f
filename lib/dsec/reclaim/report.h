// How a reclaim pass tells what it did: one `event` record per action, and the problems
// that stop one action but not the pass.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "dsec/sys/error.h"

namespace dsec::reclaim {

using nlohmann::json;

/// Where a pass reports. `event` failing (stdout closed) stops the pass; `problem` does not.
struct Report {
    std::function<Status(json)> event;
    std::function<void(const Error&)> problem;
};

/// {"type":"event","v":1,"event":what,"id":id} ("id" only when not empty).
json event(const std::string& what, const std::string& id = {});

/// Which of a file's times an age counts from: its content's last change (mtime), or
/// its inode's (ctime: a rename, a chmod).
enum class Since { modified, changed };

/// Seconds since `path` was last modified (or changed) at `now` (Unix seconds); -1 when
/// it is gone.
int64_t age_s(const std::string& path, int64_t now, Since since = Since::modified);

}  // namespace dsec::reclaim
