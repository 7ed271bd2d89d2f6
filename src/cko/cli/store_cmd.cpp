// The store verbs: `cko ls`, `cko show ID`, `cko fsck`, and invocation control `status`, `wait`, `cancel`.
#include "cko/cli/operation.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/fsck.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <memory>

namespace cko::cli {
namespace fs = std::filesystem;
namespace {

std::string status_text(const run::InvocationStatus& st) {
    std::string text = fmt::format("{}  {}  {}", st.id, st.kind, run::state_name(st.state));
    if (!st.result.is_null()) {
        text += fmt::format("  {}", st.result.value("reason", ""));
    } else {
        text += fmt::format("  (owner pid {} {})", st.owner.pid, st.owner_alive ? "alive" : "gone");
    }
    return text + "\n";
}

int status_exit(const run::InvocationStatus& st) {
    switch (st.state) {
    case run::InvocationState::running:
    case run::InvocationState::succeeded:
        return 0;
    case run::InvocationState::cancelled:
    case run::InvocationState::timed_out:
        return static_cast<int>(ExitClass::interrupted);
    default:
        return static_cast<int>(ExitClass::environment);
    }
}

Json list_store(const store::Store& s) {
    Json out{{"root", s.root().string()}, {"invocations", Json::array()}, {"experiments", Json::array()},
             {"snapshots", Json::array()}};
    for (const auto& id : run::list_invocations(s)) {
        try {
            out["invocations"].push_back(run::invocation_status(s, id).to_json());
        } catch (const Error& e) {
            out["invocations"].push_back(Json{{"id", id}, {"error", e.to_json()["error"]}});
        }
    }
    for (const auto& entry : fs::directory_iterator(s.root() / "experiments")) {
        if (entry.path().extension() == ".json") {
            out["experiments"].push_back(entry.path().stem().string());
        }
    }
    for (const auto& entry : fs::directory_iterator(s.root() / "objects" / "sha256")) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with(".")) {
            out["snapshots"].push_back(name);
        }
    }
    if (s.exists("target.json")) {
        out["target"] = s.read_record("target.json").value("id", "");
    }
    return out;
}

std::string list_text(const Json& j) {
    std::string text = fmt::format("artifact root {}\n", j["root"].get<std::string>());
    if (j.contains("target")) {
        text += fmt::format("target       {}\n", j["target"].get<std::string>());
    }
    text += fmt::format("experiments  {}\nsnapshots    {}\ninvocations  {}\n", j["experiments"].size(),
                        j["snapshots"].size(), j["invocations"].size());
    for (const auto& inv : j["invocations"]) {
        text += fmt::format("  {:<24} {:<14} {}\n", inv.value("id", ""), inv.value("kind", ""), inv.value("state", "?"));
    }
    return text;
}

Json show_record(const store::Store& s, const std::string& id) {
    if (id.starts_with("inv-")) {
        const auto st = run::invocation_status(s, id);
        Json j = st.to_json();
        j["request"] = s.read_record("invocations/" + id + "/request.json");
        return j;
    }
    if (id.starts_with("exp-") && s.exists("experiments/" + id + ".json")) {
        return s.read_record("experiments/" + id + ".json");
    }
    if (id == "target" && s.exists("target.json")) {
        return s.read_record("target.json");
    }
    if (id.size() == 64) {
        const store::Snapshot snap = store::load_snapshot(s, id);
        return s.read_record(store::snapshot_dir(id) + "/manifest.json");
    }
    throw Error(ErrorCode::not_found,
                fmt::format("no record \"{}\" in {} (ids: target, exp-…, inv-…, or a snapshot digest; see cko ls)",
                            id, s.root().string()),
                Json{{"id", id}});
}

}  // namespace

void register_store(CLI::App& app) {
    auto root = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto timeout = std::make_shared<double>(0);

    auto* ls = add_verb(app, "ls", "List what an artifact root holds", [root] {
        const Json j = list_store(store::Store::open(*root));
        return CommandResult{list_text(j), j, 0};
    });
    add_root_option(ls, *root);

    auto* show = add_verb(app, "show", "Show one record (target, exp-…, inv-…, snapshot digest)", [root, id] {
        const Json j = show_record(store::Store::open(*root), *id);
        return CommandResult{printable_json(j), j, 0};
    });
    add_root_option(show, *root);
    show->add_option("id", *id, "Record id")->required();

    auto* fsck = add_verb(app, "fsck", "Re-hash everything in an artifact root; exit 1 on damage", [root] {
        const store::FsckReport r = store::fsck_store(store::Store::open(*root));
        return CommandResult{r.to_text(), r.to_json(), r.damaged() ? 1 : 0};
    });
    add_root_option(fsck, *root);

    auto* status = add_verb(app, "status", "State of an invocation (declares `lost` if its owner died)", [root, id] {
        const auto st = run::invocation_status(store::Store::open(*root), *id);
        return CommandResult{status_text(st), st.to_json(), status_exit(st)};
    });
    add_root_option(status, *root);
    status->add_option("id", *id, "Invocation id")->required();

    auto* wait = add_verb(app, "wait", "Wait until an invocation ends (or --timeout seconds pass)", [root, id, timeout] {
        const auto limit = *timeout > 0 ? std::chrono::milliseconds(static_cast<std::int64_t>(*timeout * 1000))
                                        : std::chrono::milliseconds(std::chrono::hours(24 * 365));
        const auto st = run::wait_invocation(store::Store::open(*root), *id, limit);
        if (st.state == run::InvocationState::running) {
            throw Error(ErrorCode::timed_out, fmt::format("{} is still running after {} s", *id, *timeout),
                        st.to_json());
        }
        return CommandResult{status_text(st), st.to_json(), status_exit(st)};
    });
    add_root_option(wait, *root);
    wait->add_option("id", *id, "Invocation id")->required();
    wait->add_option("--timeout", *timeout, "Seconds to wait (default: no limit)");

    auto* cancel = add_verb(app, "cancel", "Cancel a running invocation (its child processes are killed)", [root, id] {
        const auto st = run::cancel_invocation(store::Store::open(*root), *id);
        return CommandResult{status_text(st), st.to_json(), 0};
    });
    add_root_option(cancel, *root);
    cancel->add_option("id", *id, "Invocation id")->required();
}

}  // namespace cko::cli
