// The fact-id vocabulary: exact ids, one-segment wildcards, producer prefixes.
#include "cko/fact/fact_id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace cko::fact {
namespace {

TEST(FactId, ExactIdsAreFoundWithTheirProducerAndUnit) {
    const FactIdSpec* spec = lookup_fact_id("ptxas.spill_stores_bytes");
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->producer, Producer::ptxas);
    EXPECT_EQ(spec->unit, "byte");
    EXPECT_EQ(lookup_fact_id("ptxas.spill_store_bytes"), nullptr);  // a typo is not a fact
}

TEST(FactId, AWildcardStandsForOneNameSegmentOnly) {
    EXPECT_NE(lookup_fact_id("ncu.stall.long_scoreboard_pct"), nullptr);
    EXPECT_NE(lookup_fact_id("sass.opcode.HGMMA"), nullptr);
    EXPECT_EQ(lookup_fact_id("ncu.stall._pct"), nullptr);         // empty middle
    EXPECT_EQ(lookup_fact_id("ncu.stall.a.b_pct"), nullptr);      // a dot is not one segment
    EXPECT_EQ(lookup_fact_id("sass.opcode.LDG.E.128"), nullptr);  // opcodes are base opcodes
    EXPECT_TRUE(fact_id_matches("ncu.rule.*.estimated_speedup_pct",
                                "ncu.rule.CPIStall.estimated_speedup_pct"));
}

TEST(FactId, PatternsAreUniqueAndPrefixedByTheirProducer) {
    std::set<std::string_view> seen;
    for (const FactIdSpec& spec : fact_vocabulary()) {
        EXPECT_TRUE(seen.insert(spec.pattern).second) << spec.pattern;
        EXPECT_TRUE(spec.pattern.starts_with(std::string(producer_name(spec.producer)) + "."))
            << spec.pattern;
    }
}

TEST(FactId, NcuReportIdsGetTheProducerPrefixOnce) {
    EXPECT_EQ(qualified_fact_id(Producer::ncu, "duration"), "ncu.duration");
    EXPECT_EQ(qualified_fact_id(Producer::sass, "sass.has.hgmma"), "sass.has.hgmma");
}

}  // namespace
}  // namespace cko::fact
