// The real vec.sqlite reproduces `nsys stats` CSVs byte for byte; built exports of schema
// 3.25.0 summarise as computed by hand; other major schemas and missing columns fail by name.
#include "cko/profile/nsys/nsys_export.hpp"

#include "cko/profile/nsys/testing/sql_export.hpp"
#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace cko::profile::nsys {
namespace {
namespace fs = std::filesystem;

const fs::path kVec = "tests/fixtures/nsys/vec.sqlite";

using test::read_file;

TEST(NsysExport, VecReproducesNsysStatsCsvExactly) {
    const NsysDatabase db(kVec);
    EXPECT_EQ(db.schema_version(), "3.20.3");
    EXPECT_EQ(cuda_gpu_kern_sum(db).to_csv(),
              read_file("tests/fixtures/nsys/vec_stats_cuda_gpu_kern_sum.csv"));
    EXPECT_EQ(cuda_api_sum(db).to_csv(),
              read_file("tests/fixtures/nsys/vec_stats_cuda_api_sum.csv"));
}

TEST(NsysExport, VecMemoryOpsAndIdentity) {
    const NsysExport e = import_nsys_export(kVec);
    // Durations checked with sqlite3: memset 516394322-516333202, memcpy 518003787-518001419.
    EXPECT_EQ(e.report("cuda_gpu_mem_time_sum").to_csv(),
              "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
              "Operation\n"
              "96.3,61120,1,61120.0,61120.0,61120,61120,0.0,[CUDA memset]\n"
              "3.7,2368,1,2368.0,2368.0,2368,2368,0.0,[CUDA memcpy Device-to-Host]\n");
    EXPECT_FALSE(e.report("nvtx_sum").skipped.empty());  // traced, but no NVTX ranges
    EXPECT_EQ(e.source.tool, "nsys");
    EXPECT_EQ(e.source.tool_version, "2025.3.2.0");
    EXPECT_EQ(e.source.dialect, "nsys-sqlite-3.20.3");
    EXPECT_EQ(e.source.report_sha256, sha256_file_hex(kVec));
    ASSERT_EQ(e.gpus.size(), 1u);
    EXPECT_EQ(e.gpus[0]["name"], "NVIDIA H200");
    EXPECT_EQ(e.gpus[0]["smCount"], 132);
    EXPECT_EQ(e.cuda_devices[0]["pid"], 1027);
    EXPECT_EQ(e.kernel_facts().size(), 18u);  // 3 kernels x 6
}

// [18] GPU work in a table cko does not read (graph-level rows) is counted in a note by table,
// never dropped silently; the summaries stay those of the tables cko reads.
TEST(NsysExport, GraphTraceRowsAreCountedInANoteByTable) {
    const testing::SqlExport built("tests/fixtures/nsys/graph_trace_only.sql");
    const NsysExport e = import_nsys_export(built.path());
    bool noted = false;
    for (const auto& n : e.notes) {
        noted = noted || n.find("CUPTI_ACTIVITY_KIND_GRAPH_TRACE: 3") != std::string::npos;
    }
    EXPECT_TRUE(noted) << ::testing::PrintToString(e.notes);
    EXPECT_TRUE(e.kernel_facts().empty());
    const NsysExport vec = import_nsys_export(kVec);
    for (const auto& n : vec.notes) {
        EXPECT_EQ(n.find("tables cko does not read"), std::string::npos) << n;
    }
}

// The SQL of an export with the documented 3.25.0 columns (external-anchors A3, nsys-ai schema
// notes) at `schema_version`.
std::string built_sql(const std::string& schema_version) {
    return R"(
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ')" +
           schema_version + R"('),
    ('EXPORT_PRODUCT_VERSION', '2026.2.1.210');
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'void gemm<128>(float*)'), (2, 'gemm'), (3, '_Z4gemmILi128EEvPf'),
    (4, 'relu(float*)'), (5, 'relu'), (6, 'cudaLaunchKernel_v7000'), (7, 'cudaMemcpyAsync_v3020'),
    (8, 'step'), (9, 'MyDomain'), (10, 'fwd');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
    gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
    blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
    (100, 110, 0, 1, 7, 1, 0, 1, 2, 3, 1, 1, 1, 128, 1, 1, 32, 0, 0),
    (200, 214, 0, 1, 7, 2, 0, 1, 2, 3, 1, 1, 1, 128, 1, 1, 32, 0, 0),
    (300, 325, 0, 1, 7, 3, 0, 4, 5, NULL, 1, 1, 1, 128, 1, 1, 32, 0, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, 0, 1, 6, 0), (190, 192, 0, 2, 6, 0),
    (290, 294, 0, 3, 6, 0), (400, 411, 0, 4, 7, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, streamId INTEGER NOT NULL, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (500, 520, 0, 7, 4096, 1), (600, 630, 0, 7, 64, 8);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (50, 450, 59, NULL, NULL, NULL, NULL, 16777216, NULL, 8, 0),
    (60, 160, 59, NULL, NULL, NULL, NULL, 16777216, NULL, 8, 0),
    (10, NULL, 75, NULL, NULL, NULL, 'MyDomain', 16777216, NULL, NULL, 5),
    (70, 100, 60, NULL, NULL, NULL, NULL, 16777216, NULL, 10, 5),
    (80, NULL, 60, NULL, NULL, NULL, 'open', 16777216, NULL, NULL, 0);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    totalMemory INTEGER, smCount INTEGER, chipName TEXT, memoryBandwidth INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100', '0000:01:00.0', 85899345920, 132,
    'GH100', 3352000000000);
)";
}

// That export, then `extra_sql`, in a temporary file.
class BuiltExport : public testing::SqlExport {
public:
    explicit BuiltExport(const std::string& schema_version, const std::string& extra_sql = "")
        : SqlExport(Sql{built_sql(schema_version) + extra_sql}) {}
};

TEST(NsysExport, Schema325ExportSummarisesAsComputedByHand) {
    const BuiltExport built("3.25.0");
    const NsysExport e = import_nsys_export(built.path());
    EXPECT_EQ(e.source.dialect, "nsys-sqlite-3.25.0");
    // gemm: 10 + 14 = 24 ns (2 launches, median 12.0, sd sqrt(8) = 2.83); relu: 25 ns.
    EXPECT_EQ(e.report("cuda_gpu_kern_sum").to_csv(),
              "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
              "StdDev (ns),Name\n"
              "51.0,25,1,25.0,25.0,25,25,0.0,relu(float*)\n"
              "49.0,24,2,12.0,12.0,10,14,2.8,void gemm<128>(float*)\n");
    // cudaLaunchKernel 5+2+4 = 11 ns, cudaMemcpyAsync 11 ns: a tie, broken by count then name.
    EXPECT_EQ(e.report("cuda_api_sum").to_csv(),
              "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),"
              "StdDev (ns),Name\n"
              "50.0,11,1,11.0,11.0,11,11,0.0,cudaMemcpyAsync\n"
              "50.0,11,3,3.7,4.0,2,5,1.5,cudaLaunchKernel\n");
    EXPECT_EQ(e.report("cuda_gpu_mem_time_sum").rows.at(0).name, "[CUDA memcpy Device-to-Device]");
    // step: 400 + 100 (PushPop); MyDomain:fwd 30 (StartEnd); open (start 80) is unterminated
    // and so lasts until the table's last timestamp, 450: 370 ns. Shares of 900 ns.
    EXPECT_EQ(e.report("nvtx_sum").to_csv(),
              "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
              "StdDev (ns),Style,Range\n"
              "55.6,500,2,250.0,250.0,100,400,212.1,PushPop,step\n"
              "41.1,370,1,370.0,370.0,370,370,0.0,StartEnd,open\n"
              "3.3,30,1,30.0,30.0,30,30,0.0,StartEnd,MyDomain:fwd\n");
    EXPECT_EQ(e.report("cuda_sync_sum").rows.size(), 0u);
    EXPECT_EQ(e.gpus[0]["chipName"], "GH100");
    const NsysDatabase db(built.path());
    EXPECT_EQ(cuda_gpu_kern_sum(db, KernelNaming::base).rows.at(1).name, "gemm");
    EXPECT_EQ(cuda_gpu_kern_sum(db, KernelNaming::mangled).rows.at(1).name, "_Z4gemmILi128EEvPf");
}

ErrorCode import_error(const fs::path& path, std::string* message = nullptr) {
    SCOPED_TRACE(path.string());
    const test::CaughtError e = EXPECT_ANY_CKO_ERROR((void)import_nsys_export(path));
    if (e && message != nullptr) {
        *message = e->what();
    }
    return e->code();
}

TEST(NsysExport, SchemaVersionIsIdentityNotAPin) {
    // A 3.x version without a fixture is read when its columns are there; another major is not.
    const BuiltExport other_minor("3.11.0");
    EXPECT_EQ(import_nsys_export(other_minor.path()).source.dialect, "nsys-sqlite-3.11.0");
    const BuiltExport other_major("2.9.0");
    EXPECT_EQ(import_error(other_major.path()), ErrorCode::unsupported_format);
}

TEST(NsysExport, MissingColumnFailsClosedWithItsName) {
    const BuiltExport built("3.25.0",
                            "ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME DROP COLUMN nameId;");
    std::string message;
    EXPECT_EQ(import_error(built.path(), &message), ErrorCode::missing_field);
    EXPECT_NE(message.find("CUPTI_ACTIVITY_KIND_RUNTIME lacks column(s) nameId"), std::string::npos)
        << message;
    const BuiltExport no_meta("3.25.0", "DROP TABLE META_DATA_EXPORT;");
    EXPECT_EQ(import_error(no_meta.path(), &message), ErrorCode::missing_field);
    EXPECT_NE(message.find("META_DATA_EXPORT"), std::string::npos) << message;
}

TEST(NsysExport, NotAnExportIsRefused) {
    EXPECT_EQ(import_error("tests/fixtures/nsys/vec_stats_cuda_api_sum.csv"),
              ErrorCode::unsupported_format);
    EXPECT_EQ(import_error("tests/fixtures/nsys/absent.sqlite"), ErrorCode::not_found);
}

}  // namespace
}  // namespace cko::profile::nsys
