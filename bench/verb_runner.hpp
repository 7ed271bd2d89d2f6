// Runs one cko verb in process for every benchmark iteration, stdout discarded: the path a user
// runs.
#pragma once

#include "cko/cli/command.hpp"

#include <benchmark/benchmark.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace cko::bench {

// Returns the OR of the verb's exit codes over the iterations (0 when every run succeeded); the
// caller marks the benchmark failed on non-zero.
inline int run_verb(benchmark::State& state, std::vector<std::string> words) {
    std::vector<char*> argv;
    for (auto& w : words) {
        argv.push_back(w.data());
    }
    std::ostringstream sink;
    std::streambuf* const saved = std::cout.rdbuf(sink.rdbuf());
    int rc = 0;
    for (auto _ : state) {
        sink.str("");
        rc |= cko::cli::run_cli(static_cast<int>(argv.size()), argv.data());
    }
    std::cout.rdbuf(saved);
    return rc;
}

}  // namespace cko::bench
