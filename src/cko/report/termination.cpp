// stop.json: the reason the optimization ended, with the champion and the cost at that moment.
#include "cko/report/termination.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/history.hpp"
#include "cko/store/records.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

namespace cko::report {

Json record_stop(const store::Store& store, const std::string& reason) {
    if (reason.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw Error(
            ErrorCode::invalid_request,
            "cko stop needs --reason TEXT: why the optimization ends (goal reached, budget spent, "
            "no direction left...)");
    }
    if (!store.exists(store::layout::kTarget)) {
        throw Error(ErrorCode::not_found, fmt::format("no Target is frozen in {}: nothing to stop",
                                                      store.root().string()));
    }
    if (const auto earlier = read_stop(store)) {
        throw Error(
            ErrorCode::already_exists,
            fmt::format(
                "the optimization was already stopped ({}, at unix {}): \"{}\"; the termination "
                "record is written once",
                earlier->value("id", ""), earlier->value("stopped_unix_s", std::int64_t{0}),
                earlier->value("reason", "")),
            Json{{"stop", *earlier}});
    }
    const store::TargetRecord target = store::read_target_record(store);
    const eval::Champion champion = eval::read_champion(store);
    const Json history = eval::target_history(store);
    Json record{
        {"format_version", "cko/stop-v1"},
        {"reason", reason},
        {"stopped_unix_s", unix_seconds_now()},
        {"target",
         {{"id", target.id}, {"sha256", sha256_file_hex(store.path_of(store::layout::kTarget))}}},
        {"champion",
         {{"experiment_id", champion.experiment_id ? Json(*champion.experiment_id) : Json()},
          {"digest", champion.digest}}},
        {"spent",
         {{"gpu_s", history["totals"].value("gpu_s", 0.0)},
          {"wall_s", history["totals"].value("wall_s", 0.0)}}}};
    record["id"] = content_id("stop", record);
    store.write_record(kStopRecord, record);
    return record;
}

std::optional<Json> read_stop(const store::Store& store) {
    if (!store.exists(kStopRecord)) {
        return std::nullopt;
    }
    return store.read_record(kStopRecord);
}

}  // namespace cko::report
