// Test helper: points CKO_NVML_LIBRARY at the fake NVML and rewrites its state file atomically.
#pragma once

#include "cko_test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace cko::env::testing_support {

inline constexpr const char* kFakeUuid = "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";

// A busy H200 at full clock, no processes. Later lines of a state override earlier ones, so a
// test appends what it changes.
inline std::string h200_state() {
    return std::string("driver=570.86.15\ncuda=12080\ncount=1\n") + "gpu0.uuid=" + kFakeUuid +
           "\ngpu0.name=NVIDIA H200\ngpu0.cc=9.0\ngpu0.mem_total=150754820096\n"
           "gpu0.mem_free=150000000000\ngpu0.sm_clock=1980\ngpu0.sm_clock_max=1980\n"
           "gpu0.power_mw=75500\ngpu0.power_limit_mw=700000\ngpu0.temp=31\ngpu0.util=90\n"
           "gpu0.reasons=0\ngpu0.mig=0\ngpu0.ecc=1\ngpu0.persistence=1\n";
}

class FakeNvml {
public:
    explicit FakeNvml(const std::string& library = FAKE_NVML_PATH) {
        ::setenv("CKO_NVML_LIBRARY", library.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
        ::setenv("FAKE_NVML_STATE", state_.c_str(), 1);    // NOLINT(concurrency-mt-unsafe)
        write("");
    }
    ~FakeNvml() {
        ::unsetenv("CKO_NVML_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
        ::unsetenv("FAKE_NVML_STATE");   // NOLINT(concurrency-mt-unsafe)
    }
    FakeNvml(const FakeNvml&) = delete;
    FakeNvml& operator=(const FakeNvml&) = delete;

    // Write-then-rename, so the fake (re-reading on every call) never sees half a file.
    void write(const std::string& state) const {
        const auto temp = cko::test::write_file(state_.string() + ".tmp", state);
        std::filesystem::rename(temp, state_);
    }
    [[nodiscard]] const std::filesystem::path& path() const { return state_; }

private:
    cko::test::TempDir dir_{"cko-fake-nvml"};
    std::filesystem::path state_ = dir_ / "state";
};

}  // namespace cko::env::testing_support
