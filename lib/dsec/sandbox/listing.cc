#include "dsec/sandbox/listing.h"

#include "dsec/sys/fs.h"

namespace dsec::sandbox {

std::optional<State> listed_state(const Paths& paths, const std::string& id) {
    auto state = load(paths, id);
    if (state) return *state;
    // A missing state file is a create or destroy at work (a state file is only ever
    // renamed into place whole, or removed), never a broken sandbox.
    if (state.error().code == Code::not_found) {
        if (!fs::exists(paths.state_dir(id))) return std::nullopt;
        return State{.id = id, .lifecycle = Lifecycle::creating};
    }
    return State{.id = id, .lifecycle = Lifecycle::broken};
}

}  // namespace dsec::sandbox
