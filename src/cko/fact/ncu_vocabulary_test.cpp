// Every fact the NCU importer can emit is in the vocabulary, with the same unit, so a knowledge
// trigger can name it; a new NCU semantic id without a vocabulary row fails here.
#include "cko/fact/fact_id.hpp"
#include "cko/profile/ncu/ncu_metrics.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cko::fact {
namespace {

TEST(NcuVocabulary, EverySemanticSourceHasARowWithItsUnit) {
    for (const profile::ncu::SemanticSource& s : profile::ncu::semantic_sources()) {
        const std::string id = qualified_fact_id(Producer::ncu, s.fact_id);
        const FactIdSpec* spec = lookup_fact_id(id);
        ASSERT_NE(spec, nullptr) << id << " (from " << s.metric << ") is not in fact_id.cpp";
        EXPECT_EQ(spec->producer, Producer::ncu) << id;
        EXPECT_EQ(spec->unit, profile::base_unit_name(s.unit)) << id;
    }
}

TEST(NcuVocabulary, StallAndFlopFamiliesAreCovered) {
    for (const char* metric : {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
                               "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"}) {
        const profile::ncu::MetricMeaning m = profile::ncu::classify_metric("", metric);
        ASSERT_FALSE(m.fact_id.empty()) << metric;
        EXPECT_NE(lookup_fact_id(qualified_fact_id(Producer::ncu, m.fact_id)), nullptr)
            << m.fact_id;
    }
}

}  // namespace
}  // namespace cko::fact
