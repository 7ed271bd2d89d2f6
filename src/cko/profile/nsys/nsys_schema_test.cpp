// Exports are read when the tables and columns cko needs are there with their types, whatever the
// 3.x schema version; schema 2.x, mistyped columns and Latin-1 strings behave as documented.
#include "cko/profile/nsys/nsys_export.hpp"

#include "cko/profile/nsys/testing/sql_export.hpp"
#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace cko::profile::nsys {
namespace {
namespace fs = std::filesystem;

using testing::SqlExport;

const fs::path k324 = "tests/fixtures/nsys/schema_3_24_14.sql";

Error import_failure(const fs::path& path) {
    SCOPED_TRACE(path.string());
    return *EXPECT_ANY_CKO_ERROR((void)import_nsys_export(path));
}

TEST(NsysSchema, Schema32414IsReadByItsColumnsAndNamedInTheIdentity) {
    const SqlExport built(k324);
    const NsysExport e = import_nsys_export(built.path());
    EXPECT_EQ(e.schema_version, "3.24.14");
    EXPECT_EQ(e.source.dialect, "nsys-sqlite-3.24.14");
    EXPECT_EQ(e.source.tool_version, "2026.1.1.204");
    EXPECT_EQ(e.report("cuda_gpu_kern_sum").to_csv(),
              "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
              "StdDev (ns),Name\n"
              "64.3,3600,3,1200.0,1200.0,1000,1400,200.0,\"scale(float*, float, int)\"\n"
              "35.7,2000,1,2000.0,2000.0,2000,2000,0.0,"
              "\"vec_add(const float*, const float*, float*, int)\"\n");
    const auto& api = e.report("cuda_api_sum").rows;
    ASSERT_EQ(api.size(), 3u);
    EXPECT_EQ(api[0].name, "cudaMemcpy");
    EXPECT_EQ(api[1].name, "cudaMalloc");
    EXPECT_EQ(api[2].name, "cudaLaunchKernel");
    EXPECT_EQ(api[2].count, 4);
    EXPECT_EQ(api[2].total_ns, 26);
    EXPECT_EQ(e.report("cuda_gpu_mem_time_sum").rows.at(0).name, "[CUDA memcpy Host-to-Device]");
    EXPECT_EQ(e.gpus.at(0)["computeMajor"], 9);
    EXPECT_TRUE(e.notes.empty());
}

TEST(NsysSchema, AnyThreeXVersionWithTheColumnsIsReadAndAnotherMajorIsNot) {
    const SqlExport future(
        k324, "UPDATE META_DATA_EXPORT SET value = '3.31.2' WHERE name = 'EXPORT_SCHEMA_VERSION';");
    EXPECT_EQ(import_nsys_export(future.path()).source.dialect, "nsys-sqlite-3.31.2");
    const SqlExport four(
        k324, "UPDATE META_DATA_EXPORT SET value = '4.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION';");
    const Error e = import_failure(four.path());
    EXPECT_EQ(e.code(), ErrorCode::unsupported_format);
    EXPECT_NE(std::string(e.what()).find("4.0.0"), std::string::npos) << e.what();
}

TEST(NsysSchema, Schema2ExportIsRefusedNamingItsVersion) {
    const SqlExport old("tests/fixtures/nsys/schema_2_export_meta_data.sql");
    const Error e = import_failure(old.path());
    EXPECT_EQ(e.code(), ErrorCode::unsupported_format);
    EXPECT_NE(std::string(e.what()).find("schema 2.7.1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("EXPORT_META_DATA"), std::string::npos) << e.what();
    EXPECT_EQ(e.details().value("field", ""), "EXPORT_SCHEMA_VERSION") << e.details().dump();
}

TEST(NsysSchema, A317ExportWithItsMetadataInExportMetaDataIsRead) {
    // Nsight Systems 2023.2 names the metadata table EXPORT_META_DATA and writes schema 3.1.7: a
    // 3.x export, read by its columns like any other, the table it came from noted.
    const SqlExport built("tests/fixtures/nsys/schema_3_1_7_export_meta_data.sql");
    const NsysExport e = import_nsys_export(built.path());
    EXPECT_EQ(e.schema_version, "3.1.7");
    EXPECT_EQ(e.source.dialect, "nsys-sqlite-3.1.7");
    EXPECT_EQ(e.source.tool_version, "2023.2.3");
    const auto& kernels = e.report("cuda_gpu_kern_sum").rows;
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].name, "scale(float*, float, int)");
    EXPECT_EQ(kernels[0].count, 3);
    EXPECT_EQ(kernels[0].total_ns, 3600);
    EXPECT_EQ(e.report("cuda_api_sum").rows.at(2).total_ns, 26);
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_NE(e.notes[0].find("EXPORT_META_DATA"), std::string::npos) << e.notes[0];
    for (const auto& t : e.unmodeled_tables) {
        EXPECT_NE(t, "EXPORT_META_DATA");
    }
}

TEST(NsysSchema, AColumnOfTheWrongTypeFailsByName) {
    // The same table with `start` declared REAL: its values are not the integer ns cko sums.
    const SqlExport real_start(k324, R"(
        ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME RENAME TO old_runtime;
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start REAL NOT NULL, end INTEGER NOT NULL,
            nameId INTEGER NOT NULL);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT start, end, nameId FROM old_runtime;
        DROP TABLE old_runtime;)");
    const Error e = import_failure(real_start.path());
    EXPECT_EQ(e.code(), ErrorCode::unsupported_format);
    EXPECT_NE(std::string(e.what()).find("CUPTI_ACTIVITY_KIND_RUNTIME.start is declared 'REAL'"),
              std::string::npos)
        << e.what();
    const SqlExport no_column(k324,
                              "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN shortName;");
    EXPECT_EQ(import_failure(no_column.path()).code(), ErrorCode::missing_field);
}

TEST(NsysSchema, Latin1KernelNamesAndGpuNamesAreRepairedAndNoted) {
    // 'scal\xE9' and 'H200 \xB5' in Latin-1: the bytes Nsight Systems copies from the system.
    const SqlExport latin1(k324, R"(
        UPDATE StringIds SET value = CAST(X'7363616CE9' AS TEXT) WHERE id = 1;
        UPDATE TARGET_INFO_GPU SET name = CAST(X'4832303020B5' AS TEXT);)");
    const NsysExport e = import_nsys_export(latin1.path());
    EXPECT_EQ(e.report("cuda_gpu_kern_sum").rows.at(0).name, "scal\xEF\xBF\xBD");
    EXPECT_EQ(e.gpus.at(0)["name"], "H200 \xEF\xBF\xBD");
    ASSERT_EQ(e.notes.size(), 1u);
    EXPECT_NE(e.notes[0].find("held invalid UTF-8"), std::string::npos) << e.notes[0];
    std::string text;
    ASSERT_NO_THROW(text = e.to_json().dump());
    EXPECT_TRUE(is_valid_utf8(text));
}

}  // namespace
}  // namespace cko::profile::nsys
