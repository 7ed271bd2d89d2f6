// The cko/ncu-report-v3 document read back: every metric of every launch the CSV holds, in the
// CSV's order, with its name, section, unit and value text; raw rows copied or written cell by
// cell; details launches grouped by their columns.
#include "cko/profile/ncu/ncu_document.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/roofline.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace cko::profile::ncu {
namespace {

using Metric = std::tuple<std::string, std::string, std::string, std::string>;

std::vector<Metric> from_report(const NcuReport& r, std::size_t launch) {
    std::vector<Metric> out;
    for_each_metric(r, r.launches[launch], [&](const MetricView& m) {
        out.emplace_back(m.name, m.section, m.unit, m.value);
    });
    return out;
}

std::vector<Metric> from_document(const NcuDocumentMetrics& d, std::size_t launch) {
    std::vector<Metric> out;
    for (const DocumentMetric& m : d.metrics(launch)) {
        out.emplace_back(m.name, m.section, m.unit, m.value);
    }
    return out;
}

// The document gives each launch exactly the metrics for_each_metric reads from the text; the
// number of metrics in all is returned.
std::size_t expect_document_matches(const NcuReport& r, const nlohmann::json& doc) {
    EXPECT_EQ(doc["format_version"], "cko/ncu-report-v3");
    const NcuDocumentMetrics d(doc);
    EXPECT_EQ(d.launch_count(), r.launches.size());
    std::size_t total = 0;
    for (std::size_t i = 0; i < r.launches.size(); ++i) {
        const std::vector<Metric> want = from_report(r, i);
        EXPECT_EQ(from_document(d, i), want) << "launch " << i;
        EXPECT_EQ(want.size(), r.launches[i].metric_count) << "launch " << i;
        total += want.size();
    }
    return total;
}

using test::read_file;

// The fixtures' lines split at `","` (no cell of theirs holds one, and no row spans lines).
std::vector<std::vector<std::string>> naive_rows(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] != '"') {
            continue;  // ==PROF== lines
        }
        std::vector<std::string> cells;
        std::size_t start = 1;
        for (std::size_t at; (at = line.find("\",\"", start)) != std::string::npos;
             start = at + 3) {
            cells.push_back(line.substr(start, at - start));
        }
        const std::size_t last = line.rfind('"');
        cells.push_back(line.substr(start, last > start ? last - start : 0));
        rows.push_back(std::move(cells));
    }
    return rows;
}

const std::vector<std::string> kIdentity = {
    "ID",     "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
    "Stream", "Block Size", "Grid Size",    "Device",    "CC"};

TEST(NcuDocument, RawFixturesGiveEveryMetricOfEveryRow) {
    for (const char* name : {"ncu_raw.csv", "ncu_flops_raw.csv", "ncu_flops_raw_b.csv"}) {
        const std::string path = std::string("tests/fixtures/ncu/") + name;
        const NcuReport r = read_ncu_report(path);
        const nlohmann::json doc = report_to_json(r);
        // Counted without the parser: data rows × the header's cells that are no identity column.
        const auto rows = naive_rows(read_file(path));
        ASSERT_GE(rows.size(), 2u) << name;
        std::size_t metric_columns = 0;
        for (const std::string& h : rows[0]) {
            metric_columns += std::find(kIdentity.begin(), kIdentity.end(), h) == kIdentity.end();
        }
        const std::size_t data_rows = rows.size() - 1 - (rows[1][0].empty() ? 1 : 0);
        EXPECT_EQ(expect_document_matches(r, doc), data_rows * metric_columns) << name;
        EXPECT_EQ(doc["metric_columns"].size(), 1u) << name;  // the header's, for every row
        for (const NcuLaunch& l : r.launches) {  // NCU quotes every cell: each row is copied
            EXPECT_NE(l.raw_values_at, NcuLaunch::kValueAtUnknown) << name;
        }
    }
}

TEST(NcuDocument, DetailsFixturesGiveEveryMetricRow) {
    for (const char* name : {"ncu_details.csv", "ncu_details_latin1.csv"}) {
        const std::string path = std::string("tests/fixtures/ncu/") + name;
        const NcuReport r = read_ncu_report(path);
        const nlohmann::json doc = report_to_json(r);
        const auto rows = naive_rows(read_file(path));
        ASSERT_FALSE(rows.empty());
        const auto metric_name =
            std::find(rows[0].begin(), rows[0].end(), "Metric Name") - rows[0].begin();
        std::size_t metric_rows = 0;  // rule rows have no metric name
        for (std::size_t i = 1; i < rows.size(); ++i) {
            metric_rows += rows[i].size() > static_cast<std::size_t>(metric_name) &&
                           !rows[i][metric_name].empty();
        }
        EXPECT_GT(metric_rows, 0u);
        EXPECT_EQ(expect_document_matches(r, doc), metric_rows) << name;
    }
}

TEST(NcuDocument, RawRowsNeedingEscapesOrWithoutQuotesAreWrittenCellByCell) {
    const std::string text =
        "\"ID\",\"Kernel Name\",\"a\",\"b\",\"c\"\n"
        "\"\",\"\",\"x\",\"y\",\"z\"\n"
        "\"0\",\"k\",\"1\",\"2,000\",\"n/a\"\n"
        "\"1\",\"k\",\"C:\\path\",\"2\",\"3\"\n"
        "\"2\",\"k\",\"say \"\"hi\"\"\",\"2\",\"3\"\n"
        "\"3\",\"k\",7,\"2\",\"3\"\n"
        "\"4\",\"k\",\"a\tb\",\"line1\nline2\",\"\"\n"
        "\"5\",k,\"1\",\"2\",\"3\"\n"
        "\"6\",\"k\",\"1\",\"2\",\"a much longer value than sixteen bytes\"\r\n";
    const NcuReport r = parse_ncu_csv(text);
    ASSERT_EQ(r.launches.size(), 7u);
    const nlohmann::json doc = report_to_json(r);
    EXPECT_EQ(expect_document_matches(r, doc), 7u * 3u);
    const std::vector<std::vector<std::string>> want = {
        {"1", "2,000", "n/a"},
        {"C:\\path", "2", "3"},
        {"say \"hi\"", "2", "3"},
        {"7", "2", "3"},
        {"a\tb", "line1\nline2", ""},
        {"1", "2", "3"},
        {"1", "2", "a much longer value than sixteen bytes"}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(doc["launches"][i]["values"].get<std::vector<std::string>>(), want[i]) << i;
    }
    // Rows whose cells are all quoted without "" escapes are spans the writer may copy; the
    // others are read again.
    const std::vector<bool> spans = {true, true, false, false, true, false, true};
    for (std::size_t i = 0; i < spans.size(); ++i) {
        EXPECT_EQ(r.launches[i].raw_values_at != NcuLaunch::kValueAtUnknown, spans[i]) << i;
    }
    EXPECT_EQ(r.launches[0].raw_values_size, std::string(R"("1","2,000","n/a")").size());
}

TEST(NcuDocument, RawMetricColumnsApartAreWrittenCellByCell) {
    const NcuReport r = parse_ncu_csv(
        "\"ID\",\"a\",\"Kernel Name\",\"b\"\n"
        "\"0\",\"1\",\"k\",\"2\"\n");
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0].raw_values_at, NcuLaunch::kValueAtUnknown);
    const nlohmann::json doc = report_to_json(r);
    EXPECT_EQ(expect_document_matches(r, doc), 2u);
    EXPECT_EQ(doc["launches"][0]["values"], nlohmann::json::array({"1", "2"}));
}

TEST(NcuDocument, RawPageAcrossManyOutputFlushes) {
    // Rows of about 12 KB, 3 MB in all: the document crosses the writer's 1 MB flushes.
    std::string text = "\"ID\",\"Kernel Name\"";
    for (int c = 0; c < 1000; ++c) {
        text.append(",\"m").append(std::to_string(c)).append("\"");
    }
    text.append("\n");
    for (int row = 0; row < 250; ++row) {
        text.append("\"").append(std::to_string(row)).append("\",\"kernel\"");
        for (int c = 0; c < 1000; ++c) {
            text.append(",\"").append(std::to_string(row * 1000 + c)).append("\"");
        }
        text.append("\n");
    }
    const NcuReport r = parse_ncu_csv(text);
    std::ostringstream out;
    write_report_json(r, out);
    const nlohmann::json doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(expect_document_matches(r, doc), 250u * 1000u);
}

// The thread's CPUs, and back on scope exit.
class PinnedToOneCpu {
public:
    PinnedToOneCpu() {
        CPU_ZERO(&before_);
        EXPECT_EQ(sched_getaffinity(0, sizeof before_, &before_), 0);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &before_)) {
                CPU_SET(c, &one);
                break;
            }
        }
        EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    }
    ~PinnedToOneCpu() { sched_setaffinity(0, sizeof before_, &before_); }
    PinnedToOneCpu(const PinnedToOneCpu&) = delete;
    PinnedToOneCpu& operator=(const PinnedToOneCpu&) = delete;

private:
    cpu_set_t before_;
};

int cpus_of_this_thread() {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

TEST(NcuDocument, ManyLaunchesWrittenByTwoThreadsAreTheOneThreadsBytes) {
    // 1,000 launches of three kernels (so the facts' pieces change from launch to launch), with
    // stall facts and a roofline: on two CPUs the launches go out in chunks written by two
    // threads, pinned to one CPU by one thread; the bytes are the same.
    std::string text =
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\","
        "\"smsp__average_warp_latency_issue_stalled_barrier\",\"m\"\n"
        "\"\",\"\",\"nsecond\",\"byte\",\"\",\"\"\n";
    for (int row = 0; row < 1000; ++row) {
        text += fmt::format("\"{}\",\"k{}\",\"{}.5\",\"{}\",\"{}\",\"v{}\"\n", row, row % 3,
                            1000 + row, 4096 * row, row % 7, row);
    }
    const NcuReport r = parse_ncu_csv(text);
    ASSERT_EQ(r.launches.size(), 1000u);
    ReportJsonExtras extras;
    extras.roofline_device = find_device_peaks("h200-sxm");
    ASSERT_NE(extras.roofline_device, nullptr);
    std::ostringstream two;
    write_report_json(r, two, extras);
    std::ostringstream one;
    {
        const PinnedToOneCpu pinned;
        ASSERT_EQ(cpus_of_this_thread(), 1);
        write_report_json(r, one, extras);
    }
    EXPECT_GT(one.str().size(), 300'000u);
    EXPECT_EQ(two.str(), one.str());
    const nlohmann::json doc = nlohmann::json::parse(two.str());
    EXPECT_EQ(expect_document_matches(r, doc), 4000u);
    EXPECT_EQ(doc["launches"][999]["kernel"], "k0");
    EXPECT_EQ(doc["launches"][999]["values"][3], "v999");
    EXPECT_TRUE(doc["launches"][999].contains("roofline"));
}

TEST(NcuDocument, DetailsLaunchesWithTheSameRowsShareAListOfColumns) {
    const std::string head =
        "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
        "Value\"\n";
    const NcuReport r = parse_ncu_csv(head +
                                      "\"0\",\"k\",\"S\",\"m1\",\"byte\",\"1\"\n"
                                      "\"0\",\"k\",\"S\",\"m2\",\"\",\"2\"\n"
                                      "\"1\",\"k\",\"S\",\"m1\",\"byte\",\"3\"\n"
                                      "\"2\",\"k\",\"S\",\"m1\",\"byte\",\"4\"\n"
                                      "\"2\",\"k\",\"S\",\"m2\",\"\",\"5\"\n");
    ASSERT_EQ(r.launches.size(), 3u);
    const nlohmann::json doc = report_to_json(r);
    EXPECT_EQ(expect_document_matches(r, doc), 5u);
    const nlohmann::json& l = doc["launches"];
    EXPECT_EQ(doc["metric_columns"].size(), 2u);
    EXPECT_EQ(l[0]["columns"], l[2]["columns"]);
    EXPECT_NE(l[0]["columns"], l[1]["columns"]);
    EXPECT_EQ(l[2]["values"], nlohmann::json::array({"4", "5"}));
}

TEST(NcuDocument, FindsAMetricByNameAndSection) {
    const NcuReport details = read_ncu_report("tests/fixtures/ncu/ncu_details.csv");
    const nlohmann::json ddoc = report_to_json(details);
    const NcuDocumentMetrics d(ddoc);
    std::map<std::pair<std::string, std::string>, Metric> first;  // a name's first row
    for_each_metric(details, details.launches[1], [&](const MetricView& m) {
        first.emplace(std::pair{std::string(m.section), std::string(m.name)},
                      Metric{m.name, m.section, m.unit, m.value});
    });
    ASSERT_FALSE(first.empty());
    for (const auto& [where, want] : first) {
        const auto found = d.find(1, where.second, where.first);
        ASSERT_TRUE(found.has_value()) << where.second;
        EXPECT_EQ((Metric{found->name, found->section, found->unit, found->value}), want);
    }
    EXPECT_FALSE(d.find(1, "Duration", "No Such Section").has_value());
    EXPECT_FALSE(d.find(1, "no such metric").has_value());

    const NcuReport raw = read_ncu_report("tests/fixtures/ncu/ncu_raw.csv");
    const nlohmann::json rdoc = report_to_json(raw);
    const NcuDocumentMetrics rd(rdoc);
    for (std::size_t i = 0; i < raw.launches.size(); ++i) {
        const auto found = rd.find(i, "gpu__time_duration.sum");
        ASSERT_TRUE(found.has_value());
        std::string want;
        for_each_metric(raw, raw.launches[i], [&](const MetricView& m) {
            if (m.name == "gpu__time_duration.sum") {
                want = std::string(m.unit) + " " + std::string(m.value);
            }
        });
        EXPECT_EQ(std::string(found->unit) + " " + std::string(found->value), want);
    }
}

TEST(NcuDocument, RefusesOtherDocumentsAndValuesThatMissTheirColumns) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    nlohmann::json doc = report_to_json(r);
    const auto code_of = [](const nlohmann::json& d, std::size_t launch) {
        const test::CaughtError e =
            test::error_thrown_by([&] { (void)NcuDocumentMetrics(d).metrics(launch); });
        return e ? std::string(error_code_name(e->code())) : std::string("none");
    };
    EXPECT_EQ(code_of(doc, 0), "none");
    EXPECT_EQ(code_of(doc, r.launches.size()), "malformed_input");
    nlohmann::json v2 = doc;
    v2["format_version"] = "cko/ncu-report-v2";
    EXPECT_EQ(code_of(v2, 0), "unsupported_format");
    nlohmann::json short_values = doc;
    short_values["launches"][0]["values"].erase(0);
    EXPECT_EQ(code_of(short_values, 0), "malformed_input");
    nlohmann::json bad_list = doc;
    bad_list["launches"][0]["columns"] = 7;
    EXPECT_EQ(code_of(bad_list, 0), "malformed_input");
    nlohmann::json bad_key = doc;
    bad_key["metric_columns"][0][0][0] = doc["metric_keys"].size();
    EXPECT_EQ(code_of(bad_key, 0), "malformed_input");
}

}  // namespace
}  // namespace cko::profile::ncu
