// The call workspace of an invocation: the frozen snapshots its driver calls read, materialized
// read-only under invocations/<id>/workspace/ (subjects by role, cases by id) and removed when the
// workspace goes. The standalone `driver run` and every measurement session use this one.
#pragma once

#include "cko/store/snapshot.hpp"
#include "cko/store/store.hpp"

#include <filesystem>
#include <string>

namespace cko::driver {

class CallWorkspace {
public:
    CallWorkspace(const store::Store& store, const std::string& invocation_id);
    ~CallWorkspace();  // removes the whole tree, read-only files included
    CallWorkspace(const CallWorkspace&) = delete;
    CallWorkspace& operator=(const CallWorkspace&) = delete;

    // Materializes the snapshot as <workspace>/<role>; returns that path for the request.
    [[nodiscard]] std::string add_subject(const std::string& role, const store::Snapshot& snapshot);
    // Materializes the case as <workspace>/cases/<id>.json; returns that path.
    [[nodiscard]] std::string add_case(const std::string& id, const store::Snapshot& snapshot);

private:
    const store::Store& store_;
    std::filesystem::path dir_;
};

}  // namespace cko::driver
