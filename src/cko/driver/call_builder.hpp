// The rules of one standalone driver call (`cko driver run`): its options, typed, become the
// driver, its request and the invocation's limits, or the first option that is wrong is refused.
#pragma once

#include "cko/driver/call.hpp"
#include "cko/driver/protocol.hpp"
#include "cko/run/invocation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cko::driver {

// What `cko driver run` is asked, as given: words where the protocol has closed words or
// NAME:UNIT pairs, seconds where the runtime has durations. The defaults are the verb's.
struct CallOptions {
    std::vector<std::string> argv;          // the driver command
    std::vector<std::string> capabilities;  // "single_subject", "paired_in_process"
    std::vector<std::string> env_allow;     // added to DriverSpec's default allow-list
    std::string mode = "smoke";             // smoke, single or paired
    std::string case_id = "main";
    std::string case_file;
    std::string reference;
    std::string candidate;  // paired only
    std::int64_t samples = 5;
    std::uint64_t seed = 0;  // its parity picks the paired order
    std::string primary = "latency_us:us";
    std::vector<std::string> constraints;
    std::vector<std::string> correctness_metrics;
    double command_timeout_s = 300;
    double operation_timeout_s = 3600;
    double resource_wait_s = 120;
    double cleanup_timeout_s = 10;
};

struct BuiltCall {
    DriverSpec driver;
    Request request;  // subjects[].path and case_path still name the user's files
    run::Limits limits;
};

// Checked in this order, each failure invalid_argument naming its field: the argv is not empty,
// the mode is a mode, the case id a safe name, the case file and the reference given; paired needs
// a candidate and a driver declared paired_in_process, and only paired takes a candidate;
// 1 <= samples <= 100000; metrics are NAME:UNIT; every timeout is positive.
[[nodiscard]] BuiltCall build_call(const CallOptions& options);

}  // namespace cko::driver
