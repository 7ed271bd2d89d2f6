// Time to summarise an Nsight Systems export with 1 M kernel rows (and 1 M CUDA API rows).
// The export is generated once under the temp dir with the columns of schema 3.20.3.
#include "cko/profile/nsys/nsys_export.hpp"

#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>
#include <string>

namespace {
namespace fs = std::filesystem;

constexpr int kKernelRows = 1'000'000;
constexpr int kKernelNames = 500;

void exec(sqlite3* db, const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string message = error != nullptr ? error : "?";
        sqlite3_free(error);
        throw std::runtime_error(message);
    }
}

fs::path bench_export() {
    const fs::path path = fs::temp_directory_path() / "cko_nsys_bench_1m.sqlite";
    if (fs::exists(path)) {
        return path;
    }
    const fs::path partial = path.string() + ".partial";
    fs::remove(partial);
    sqlite3* db = nullptr;
    sqlite3_open(partial.c_str(), &db);
    exec(db, R"(PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3'),
    ('EXPORT_PRODUCT_VERSION', '2025.3.2.0');
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
    blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);)");
    sqlite3_stmt* name = nullptr;
    sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?1, ?2)", -1, &name, nullptr);
    for (int i = 0; i <= kKernelNames; ++i) {
        const std::string text =
            i == 0 ? "cudaLaunchKernel_v7000"
                   : "void kernel_" + std::to_string(i) + "<float, 128>(float const*, float*, int)";
        sqlite3_bind_int(name, 1, i);
        sqlite3_bind_text(name, 2, text.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_step(name);
        sqlite3_reset(name);
    }
    sqlite3_finalize(name);
    sqlite3_stmt* kernel = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 1, 7, ?3, 0, "
                       "?4, ?4, NULL, 128, 1, 1, 256, 1, 1, 32)",
                       -1, &kernel, nullptr);
    sqlite3_stmt* api = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 0, 1, ?3, 0, 0, "
                       "NULL)",
                       -1, &api, nullptr);
    std::mt19937_64 rng(1);
    std::int64_t t = 1'000'000;
    for (int i = 0; i < kKernelRows; ++i) {
        const std::int64_t launch = 2000 + static_cast<std::int64_t>(rng() % 4000);
        const std::int64_t dur = 1000 + static_cast<std::int64_t>(rng() % 200000);
        sqlite3_bind_int64(api, 1, t);
        sqlite3_bind_int64(api, 2, t + launch);
        sqlite3_bind_int(api, 3, i);
        sqlite3_step(api);
        sqlite3_reset(api);
        sqlite3_bind_int64(kernel, 1, t + launch + 500);
        sqlite3_bind_int64(kernel, 2, t + launch + 500 + dur);
        sqlite3_bind_int(kernel, 3, i);
        sqlite3_bind_int(kernel, 4, 1 + static_cast<int>(rng() % kKernelNames));
        sqlite3_step(kernel);
        sqlite3_reset(kernel);
        t += launch + 700;
    }
    sqlite3_finalize(kernel);
    sqlite3_finalize(api);
    exec(db, "COMMIT;");
    sqlite3_close(db);
    fs::rename(partial, path);
    return path;
}

void BM_NsysSummarize1MKernels(benchmark::State& state) {
    const fs::path path = bench_export();
    for (auto _ : state) {
        const auto e = cko::profile::nsys::import_nsys_export(path);
        benchmark::DoNotOptimize(e.reports.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kKernelRows);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * fs::file_size(path)));
}
BENCHMARK(BM_NsysSummarize1MKernels)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_NsysKernSumOnly(benchmark::State& state) {
    const fs::path path = bench_export();
    for (auto _ : state) {
        const cko::profile::nsys::NsysDatabase db(path);
        benchmark::DoNotOptimize(cko::profile::nsys::cuda_gpu_kern_sum(db).rows.size());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kKernelRows);
}
BENCHMARK(BM_NsysKernSumOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
