// Snapshots materialized for one invocation's driver calls, and removed with it.
#include "cko/driver/workspace.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/files.hpp"

namespace cko::driver {

CallWorkspace::CallWorkspace(const store::Store& store, const std::string& invocation_id)
    : store_(store), dir_(store.root() / store::layout::invocation_workspace(invocation_id)) {}

CallWorkspace::~CallWorkspace() {
    remove_tree_forcibly(dir_);
}

std::string CallWorkspace::add_subject(const std::string& role, const store::Snapshot& snapshot) {
    const std::filesystem::path dest = dir_ / role;
    store::materialize_snapshot(store_, snapshot, dest);
    return dest.string();
}

std::string CallWorkspace::add_case(const std::string& id, const store::Snapshot& snapshot) {
    const std::filesystem::path dest = dir_ / "cases" / (id + ".json");
    store::materialize_snapshot(store_, snapshot, dest);
    return dest.string();
}

}  // namespace cko::driver
