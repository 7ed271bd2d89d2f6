// The real H200 exports (tests/fixtures/ncu/, NCU 2025.3.1): launches, identities, facts, rules.
#include "cko/profile/ncu/ncu_csv.hpp"

#include <gtest/gtest.h>

namespace cko::profile::ncu {
namespace {

const NcuReport& raw_report() {
    static const NcuReport report = read_ncu_report("tests/fixtures/ncu/ncu_raw.csv");
    return report;
}

const NcuReport& details_report() {
    static const NcuReport report = read_ncu_report("tests/fixtures/ncu/ncu_details.csv");
    return report;
}

double fact(const NcuLaunch& launch, std::string_view id) {
    const LaunchFact* f = launch.find(id);
    EXPECT_NE(f, nullptr) << "launch " << *launch.scope.launch_id << " lacks " << id;
    return f == nullptr ? -1 : f->value;
}

using Dim3 = std::array<std::int64_t, 3>;

void expect_three_kernels(const NcuReport& report) {
    ASSERT_EQ(report.launches.size(), 7u);
    for (std::size_t i = 0; i < 7; ++i) {
        const NcuLaunch& l = report.launches[i];
        EXPECT_EQ(l.scope.launch_id, static_cast<std::int64_t>(i));
        EXPECT_EQ(l.scope.stream, 7);
        EXPECT_EQ(l.scope.context, 1);
        EXPECT_EQ(l.scope.device, 0);
        if (i == 6) {
            EXPECT_EQ(l.scope.kernel, "sgemm_naive(const float *, const float *, float *, int)");
            EXPECT_EQ(l.scope.grid, (Dim3{64, 64, 1}));
            EXPECT_EQ(l.scope.block, (Dim3{16, 16, 1}));
        } else if (i % 2 == 0) {
            EXPECT_EQ(l.scope.kernel, "scale_naive(const float *, float *, float, int)");
            EXPECT_EQ(l.scope.grid, (Dim3{262144, 1, 1}));
            EXPECT_EQ(l.scope.block, (Dim3{256, 1, 1}));
        } else {
            EXPECT_EQ(l.scope.kernel, "scale_vec4(const float4 *, float4 *, float, int)");
            EXPECT_EQ(l.scope.grid, (Dim3{1056, 1, 1}));
            EXPECT_EQ(l.scope.block, (Dim3{256, 1, 1}));
        }
    }
}

TEST(NcuRawPage, FindsTheSevenLaunchesOfThreeKernelsWithTheirGridAndBlock) {
    const NcuReport& r = raw_report();
    EXPECT_EQ(r.layout, NcuLayout::raw);
    EXPECT_EQ(r.source.dialect, "ncu-csv-raw");
    EXPECT_TRUE(r.units_row);
    expect_three_kernels(r);
}

TEST(NcuRawPage, DurationsInNanosecondsMatchTheCsv) {
    const std::array<double, 7> want = {203488, 130720, 203232, 132704, 203392, 131424, 414368};
    for (std::size_t i = 0; i < 7; ++i) {
        EXPECT_DOUBLE_EQ(fact(raw_report().launches[i], "duration"), want[i]);
        EXPECT_EQ(raw_report().launches[i].find("duration")->metric(), "gpu__time_duration.sum");
    }
}

TEST(NcuRawPage, LaunchesShareTheNameOfOneFact) {
    static_assert(sizeof(LaunchFact) == 16, "a fact is its value and its name's address");
    const NcuReport& r = raw_report();
    const LaunchFact* first = r.launches[0].find("duration");
    ASSERT_NE(first, nullptr);
    for (const NcuLaunch& l : r.launches) {
        const LaunchFact* f = l.find("duration");
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(f->name, first->name);  // kept once in the report, not once per launch
        EXPECT_EQ(f->unit(), BaseUnit::ns);
    }
}

std::vector<std::pair<std::string, std::string>> metrics_of(const NcuReport& r,
                                                            const NcuLaunch& l) {
    std::vector<std::pair<std::string, std::string>> out;
    for_each_metric(r, l, [&](const MetricView& m) {
        out.emplace_back(std::string(m.name), std::string(m.value));
    });
    return out;
}

TEST(NcuRawPage, KeepsEveryMetricOfEveryLaunchAsPrinted) {
    const NcuReport& r = raw_report();
    for (const NcuLaunch& l : r.launches) {
        EXPECT_EQ(l.metric_count, 566u - 11u);  // all columns but the 11 identity columns
        EXPECT_EQ(metrics_of(r, l).size(), 566u - 11u);
    }
    const auto clock = metrics_of(r, r.launches[0])[30 - 11];
    EXPECT_EQ(clock.first, "device__attribute_clock_rate");
    EXPECT_EQ(clock.second, "1,980,000");
}

TEST(NcuRawPage, ReadsThousandsSeparatorsAndConvertsUnits) {
    const NcuLaunch& naive = raw_report().launches[0];
    EXPECT_DOUBLE_EQ(fact(naive, "clock.sm"), 1978863004.21);  // "1,978,863,004.21" hz
    EXPECT_DOUBLE_EQ(fact(naive, "launch.threads"), 67108864);
    EXPECT_DOUBLE_EQ(fact(naive, "launch.registers_per_thread"), 16);
    EXPECT_DOUBLE_EQ(fact(naive, "launch.waves_per_sm"), 248.24);
    EXPECT_DOUBLE_EQ(fact(naive, "launch.shared_mem_driver_per_block"), 1024);
}

TEST(NcuRawPage, ScaleVec4ReadsDramAtMostOfItsPeak) {
    const NcuLaunch& vec4 = raw_report().launches[1];
    EXPECT_DOUBLE_EQ(fact(vec4, "dram.throughput_pct"), 81.91);
    EXPECT_EQ(vec4.find("dram.throughput_pct")->metric(),
              "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed");
    EXPECT_DOUBLE_EQ(fact(vec4, "occupancy.achieved_pct"), 95.69);
    EXPECT_DOUBLE_EQ(fact(vec4, "occupancy.theoretical_pct"), 100);
    EXPECT_DOUBLE_EQ(fact(vec4, "occupancy.limit_registers"), 10);
    EXPECT_DOUBLE_EQ(fact(vec4, "sm.throughput_pct"), 6.14);
    EXPECT_DOUBLE_EQ(fact(vec4, "tensor.pipe_pct"), 0);
}

TEST(NcuRawPage, HasThirtyNamedFactsPerLaunch) {
    // Every launch of the fixture exports the same metrics, so each has the same 30 facts.
    const auto& launches = raw_report().launches;
    ASSERT_EQ(launches.size(), 7u);
    for (const NcuLaunch& l : launches) {
        EXPECT_EQ(l.facts.size(), 30u);
    }
}

TEST(NcuRawPage, SetsAsideProgramOutputAndToolLines) {
    const NcuReport& r = raw_report();
    EXPECT_EQ(r.other_lines, 4u);  // ==WARNING==, two ==PROF== lines, "done no error"
    ASSERT_EQ(r.tool_messages.size(), 1u);
    EXPECT_TRUE(r.tool_messages[0].starts_with("==WARNING== Note: Running with unmodified"));
    EXPECT_EQ(r.device_name, "NVIDIA H200");
    EXPECT_TRUE(r.counters_permitted());
}

TEST(NcuRawPage, ListsTextValuesAndUnknownUnitsAsUnmodeled) {
    const NcuReport& r = raw_report();
    const auto listed = [&](std::string_view name) {
        return std::any_of(r.unmodeled.begin(), r.unmodeled.end(),
                           [&](const Unmodeled& u) { return u.name == name; });
    };
    EXPECT_TRUE(listed("launch__func_cache_config"));                  // "CachePreferNone"
    EXPECT_TRUE(listed("derived__pct_occupancy_per_register_count"));  // unit "%/register"
    EXPECT_FALSE(listed("gpu__time_duration.sum"));
    EXPECT_GT(r.launches[0].unmodeled, 0u);
}

TEST(NcuRawPage, BindsTheReportByItsDigest) {
    const NcuReport& r = raw_report();
    EXPECT_EQ(r.source.tool, "ncu");
    EXPECT_EQ(r.source.report_sha256.size(), 64u);
    EXPECT_EQ(r.source.parser_version, kNcuParserVersion);
    EXPECT_TRUE(r.source.tool_version.empty());  // the raw page does not say; nobody told us
}

TEST(NcuDetailsPage, FindsTheSameSevenLaunches) {
    const NcuReport& r = details_report();
    EXPECT_EQ(r.layout, NcuLayout::details);
    EXPECT_EQ(r.source.dialect, "ncu-csv-details");
    expect_three_kernels(r);
}

TEST(NcuDetailsPage, DurationsInMicrosecondsBecomeNanoseconds) {
    const std::array<double, 7> want = {203390, 132800, 203230, 130660, 203300, 132220, 414370};
    for (std::size_t i = 0; i < 7; ++i) {
        EXPECT_NEAR(fact(details_report().launches[i], "duration"), want[i], 1e-6);
    }
    EXPECT_EQ(details_report().launches[1].find("duration")->metric(),
              "GPU Speed Of Light Throughput: Duration");
}

TEST(NcuDetailsPage, ScaleVec4ReadsDramAtAPlausibleFractionOf4_8TBs) {
    const NcuLaunch& vec4 = details_report().launches[1];
    const double bytes_per_second = fact(vec4, "dram.throughput");  // "3.88" Tbyte/s
    EXPECT_DOUBLE_EQ(bytes_per_second, 3.88e12);
    EXPECT_GT(bytes_per_second / 4.8e12, 0.6);
    EXPECT_LT(bytes_per_second / 4.8e12, 0.95);
    EXPECT_DOUBLE_EQ(fact(details_report().launches[6], "dram.throughput"), 20.26e9);
}

TEST(NcuDetailsPage, SectionDisplayNamesGiveTheSameFactsAsRawNames) {
    const NcuLaunch& vec4 = details_report().launches[1];
    EXPECT_DOUBLE_EQ(fact(vec4, "memory.throughput_pct"), 80.65);
    EXPECT_DOUBLE_EQ(fact(vec4, "occupancy.achieved_pct"), 95.65);
    EXPECT_DOUBLE_EQ(fact(vec4, "launch.registers_per_thread"), 18);
    EXPECT_DOUBLE_EQ(fact(vec4, "launch.shared_mem_driver_per_block"), 1020);  // 1.02 Kbyte/block
    EXPECT_DOUBLE_EQ(fact(vec4, "clock.dram"), 3.2e9);                         // 3.20 Ghz
    EXPECT_DOUBLE_EQ(fact(vec4, "l2.hit_rate_pct"), 50.89);
    EXPECT_DOUBLE_EQ(fact(vec4, "issue.slots_busy_pct"), 4.30);
    EXPECT_DOUBLE_EQ(fact(vec4, "inst.executed"), 5893888);
    EXPECT_EQ(vec4.facts.size(), 47u);  // 43 metric facts + 4 rule speed-up estimates
}

TEST(NcuDetailsPage, KeepsRuleFindingsWithTheirEstimatedSpeedup) {
    const NcuLaunch& vec4 = details_report().launches[1];
    ASSERT_EQ(vec4.rules.size(), 7u);
    EXPECT_EQ(vec4.rules[2].name, "HighPipeUtilization");
    EXPECT_EQ(vec4.rules[2].type, "OPT");
    EXPECT_EQ(vec4.rules[2].speedup_type, "local");
    EXPECT_DOUBLE_EQ(*vec4.rules[2].estimated_speedup_pct, 96.94);
    EXPECT_FALSE(vec4.rules[0].estimated_speedup_pct.has_value());  // SOLBottleneck INF
    EXPECT_DOUBLE_EQ(fact(vec4, "rule.HighPipeUtilization.estimated_speedup_pct"), 96.94);
    // sgemm has two CPIStall findings, both at 7.033: the fact is the larger one.
    EXPECT_DOUBLE_EQ(fact(details_report().launches[6], "rule.CPIStall.estimated_speedup_pct"),
                     7.033);
}

TEST(NcuDetailsPage, Ncu2020SpeedOfLightNamesGiveDurationDramAndSmFacts) {
    // NCU 2019.5/2020.1: section "GPU Speed Of Light", "SOL FB" (the frame buffer, i.e. DRAM),
    // "SM [%]", "Memory [%]", Duration in usecond/msecond, a "Kernel Time" column, no grid/block.
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_details_2020_1.csv");
    ASSERT_EQ(r.launches.size(), 2u);
    const NcuLaunch& saxpy = r.launches[0];
    EXPECT_DOUBLE_EQ(fact(saxpy, "duration"), 12350);  // 12.35 usecond
    EXPECT_DOUBLE_EQ(fact(saxpy, "dram.throughput_pct"), 61.20);
    EXPECT_DOUBLE_EQ(fact(saxpy, "sm.throughput_pct"), 18.40);
    EXPECT_DOUBLE_EQ(fact(saxpy, "memory.throughput_pct"), 61.20);
    EXPECT_DOUBLE_EQ(fact(saxpy, "l2.throughput_pct"), 20.50);
    EXPECT_DOUBLE_EQ(fact(saxpy, "l1.throughput_pct"), 11.10);
    EXPECT_DOUBLE_EQ(fact(saxpy, "clock.dram"), 1215000000);
    EXPECT_DOUBLE_EQ(fact(saxpy, "clock.sm"), 1410000000);
    EXPECT_DOUBLE_EQ(fact(saxpy, "cycles.elapsed"), 17400);
    ASSERT_NE(saxpy.find("dram.throughput_pct"), nullptr);
    EXPECT_EQ(saxpy.find("dram.throughput_pct")->metric(), "GPU Speed Of Light: SOL FB");
    const NcuLaunch& reduce = r.launches[1];
    EXPECT_DOUBLE_EQ(fact(reduce, "duration"), 1250000);  // 1.25 msecond
    EXPECT_DOUBLE_EQ(fact(reduce, "sm.throughput_pct"), 83.10);
    bool noted = false;
    for (const std::string& note : r.notes) {
        noted = noted || note.find("GPU Speed Of Light") != std::string::npos;
    }
    EXPECT_TRUE(noted) << "no note names the NCU 2019.5-2020.1 section spelling";
}

TEST(NcuDetailsPage, LaunchesWithoutADurationAreCountedInANote) {
    // A section name no table row knows: every launch is kept, none has a duration, and the
    // report says so instead of leaving the fact silently absent.
    const NcuReport r = parse_ncu_csv(
        "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
        "\"Metric Value\"\n"
        "\"0\",\"k\",\"Velocity Of Light\",\"Duration\",\"usecond\",\"3.5\"\n"
        "\"1\",\"k\",\"Velocity Of Light\",\"Duration\",\"usecond\",\"3.6\"\n");
    ASSERT_EQ(r.launches.size(), 2u);
    EXPECT_EQ(r.launches[0].find("duration"), nullptr);
    bool noted = false;
    for (const std::string& note : r.notes) {
        noted = noted || note.find("2 of 2 launches have no duration") != std::string::npos;
    }
    EXPECT_TRUE(noted) << "no note counts the launches without a duration";
}

// A rule fact's name is reused from the launch before when its section and rule name are the
// same; "A: B" + "C" and "A" + "B: C" make one "Section: Name" string but two rules.
TEST(NcuDetailsPage, RuleFactsOfRulesWhoseNamesReadAlikeStayApart) {
    const std::string head =
        "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
        "\"Metric Value\",\"Rule Name\",\"Rule Type\",\"Rule Description\","
        "\"Estimated Speedup Type\",\"Estimated Speedup\"\n";
    const NcuReport r =
        parse_ncu_csv(head +
                      "\"0\",\"k\",\"A: B\",\"\",\"\",\"\",\"C\",\"OPT\",\"d\",\"local\",\"10\"\n"
                      "\"1\",\"k\",\"A: B\",\"\",\"\",\"\",\"C\",\"OPT\",\"d\",\"local\",\"11\"\n"
                      "\"2\",\"k\",\"A\",\"\",\"\",\"\",\"B: C\",\"OPT\",\"d\",\"local\",\"20\"\n"
                      "\"3\",\"k\",\"A: B\",\"\",\"\",\"\",\"D\",\"OPT\",\"d\",\"local\",\"30\"\n");
    ASSERT_EQ(r.launches.size(), 4u);
    const auto only_fact = [](const NcuLaunch& l) {
        EXPECT_EQ(l.facts.size(), 1u);
        return l.facts.empty()
                   ? std::string()
                   : std::string(l.facts[0].id()) + " | " + std::string(l.facts[0].metric());
    };
    EXPECT_EQ(only_fact(r.launches[0]), "rule.C.estimated_speedup_pct | A: B: C");
    EXPECT_EQ(only_fact(r.launches[1]), "rule.C.estimated_speedup_pct | A: B: C");
    EXPECT_EQ(r.launches[1].facts[0].name, r.launches[0].facts[0].name);
    EXPECT_EQ(only_fact(r.launches[2]), "rule.B: C.estimated_speedup_pct | A: B: C");
    EXPECT_EQ(only_fact(r.launches[3]), "rule.D.estimated_speedup_pct | A: B: D");
    EXPECT_DOUBLE_EQ(r.launches[1].facts[0].value, 11);
}

TEST(NcuDetailsPage, KeepsEveryMetricRow) {
    std::size_t metrics = 0;
    std::size_t rules = 0;
    for (const NcuLaunch& l : details_report().launches) {
        metrics += l.metric_count;
        EXPECT_EQ(metrics_of(details_report(), l).size(), l.metric_count);
        rules += l.rules.size();
    }
    EXPECT_EQ(metrics + rules, 664u);  // every data row of the file
}

// --json reads a details row back from its value cell; a value with "" escapes (unescaped into
// scratch while parsing) or an unquoted one is read from the row's start instead. Each way gives
// the value for_each_metric reads from the whole row.
TEST(NcuDetailsPage, JsonValuesAreTheRowsValuesHoweverQuoted) {
    const std::string head =
        "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
        "Value\"\n";
    const std::string text = head +
                             "\"0\",\"k\",\"S\",\"plain\",\"\",\"12.5\"\n"
                             "\"0\",\"k\",\"S\",\"escaped\",\"\",\"say \"\"hi\"\"\"\n"
                             "\"0\",\"k\",\"S\",\"unquoted\",\"\",7\n"
                             "\"0\",\"k\",\"S\",\"empty\",\"\",\"\"\n"
                             "\"0\",\"k\",\"S\",\"last\",\"\",\"a,b\"";
    const NcuReport r = parse_ncu_csv(text);
    ASSERT_EQ(r.launches.size(), 1u);
    std::vector<std::string> want;
    for_each_metric(r, r.launches[0], [&](const MetricView& m) { want.emplace_back(m.value); });
    EXPECT_EQ(want, (std::vector<std::string>{"12.5", "say \"hi\"", "7", "", "a,b"}));
    const nlohmann::json doc = report_to_json(r);
    EXPECT_EQ(doc["launches"][0]["values"].get<std::vector<std::string>>(), want);
}

}  // namespace
}  // namespace cko::profile::ncu
