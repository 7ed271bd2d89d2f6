// Time to summarise an Nsight Systems export with 1 M kernel rows, 1 M CUDA API rows and 100 k
// rows each of memcpy, memset, synchronization and NVTX ranges, so that all five reports have data;
// and the whole `cko profile nsys FILE --json` verb on it. The export is generated once under the
// temp dir with the columns of schema 3.20.3 (copied from tests/fixtures/nsys/vec.sqlite where it
// has the table; NVTX_EVENTS and the sync table as Nsight Systems 2025.3 writes them).
#include "cko/cli/command.hpp"
#include "cko/profile/nsys/nsys_export.hpp"
#include "verb_runner.hpp"

#include <benchmark/benchmark.h>
#include <sqlite3.h>

#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

constexpr int kKernelRows = 1'000'000;
constexpr int kKernelNames = 500;
constexpr int kOtherRows = 100'000;  // each of memcpy, memset, sync, NVTX ranges
constexpr int kRanges = 50;          // NVTX range names

void exec(sqlite3* db, const std::string& sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        const std::string message = error != nullptr ? error : "?";
        sqlite3_free(error);
        throw std::runtime_error(message);
    }
}

fs::path bench_export() {
    const fs::path path = fs::temp_directory_path() / "cko_nsys_bench_1m_5reports.sqlite";
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
    nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
    srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
    migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
    bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'), (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (1, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE', 'Event sync'),
    (3, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE', 'Stream sync'),
    (4, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE', 'Context sync');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,
    jsonText TEXT, binaryData TEXT);)");
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
    sqlite3_stmt* memcpy = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                       "streamId, bytes, copyKind) VALUES (?1, ?2, 0, 1, 7, ?3, ?4)",
                       -1, &memcpy, nullptr);
    sqlite3_stmt* memset = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
                       "streamId, value, bytes) VALUES (?1, ?2, 0, 1, 7, 0, ?3)",
                       -1, &memset, nullptr);
    sqlite3_stmt* sync = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?1, ?2, 0, 1, 7, "
                       "?3, 0, ?4, 0)",
                       -1, &sync, nullptr);
    sqlite3_stmt* nvtx = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                       "VALUES (?1, ?2, 59, ?3, 281474993487872, 0)",
                       -1, &nvtx, nullptr);
    const int copy_kinds[] = {1, 2, 8};
    const int sync_types[] = {1, 3, 4};
    for (int i = 0; i < kOtherRows; ++i) {
        const std::int64_t at = 1'000'000 + static_cast<std::int64_t>(i) * 9000;
        const std::int64_t dur = 500 + static_cast<std::int64_t>(rng() % 50000);
        sqlite3_bind_int64(memcpy, 1, at);
        sqlite3_bind_int64(memcpy, 2, at + dur);
        sqlite3_bind_int64(memcpy, 3, 4096 + static_cast<std::int64_t>(rng() % (1 << 20)));
        sqlite3_bind_int(memcpy, 4, copy_kinds[rng() % 3]);
        sqlite3_step(memcpy);
        sqlite3_reset(memcpy);
        sqlite3_bind_int64(memset, 1, at + 100);
        sqlite3_bind_int64(memset, 2, at + 100 + dur / 4);
        sqlite3_bind_int64(memset, 3, 4096);
        sqlite3_step(memset);
        sqlite3_reset(memset);
        sqlite3_bind_int64(sync, 1, at + 200);
        sqlite3_bind_int64(sync, 2, at + 200 + dur);
        sqlite3_bind_int(sync, 3, i);
        sqlite3_bind_int(sync, 4, sync_types[rng() % 3]);
        sqlite3_step(sync);
        sqlite3_reset(sync);
        const std::string range = "step_" + std::to_string(rng() % kRanges);
        sqlite3_bind_int64(nvtx, 1, at);
        sqlite3_bind_int64(nvtx, 2, at + 8000);
        sqlite3_bind_text(nvtx, 3, range.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_step(nvtx);
        sqlite3_reset(nvtx);
    }
    sqlite3_finalize(memcpy);
    sqlite3_finalize(memset);
    sqlite3_finalize(sync);
    sqlite3_finalize(nvtx);
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
    // Every report must have had rows to summarise, or the figure is not "every report".
    for (const auto& r : cko::profile::nsys::import_nsys_export(path).reports) {
        if (r.rows.empty()) {
            state.SkipWithError(("report " + r.name + " is empty in the bench export").c_str());
            return;
        }
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

// The verb a user runs, whole, in process: `cko profile nsys FILE [--json]`, output discarded.
void BM_ProfileNsysVerb(benchmark::State& state) {
    const fs::path path = bench_export();
    std::vector<std::string> words = {"cko", "profile", "nsys", path.string()};
    if (state.range(0) != 0) {
        words.emplace_back("--json");
    }
    const int rc = cko::bench::run_verb(state, words);
    if (rc != 0) {
        state.SkipWithError("cko profile nsys failed");
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kKernelRows);
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * fs::file_size(path)));
}
BENCHMARK(BM_ProfileNsysVerb)
    ->ArgName("json")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
