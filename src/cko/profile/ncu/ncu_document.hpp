// Reading a `cko/ncu-report-v3` document back: each launch's metrics as printed, by name.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace cko::profile::ncu {

// One metric of one launch as the document holds it: views into the document's strings.
struct DocumentMetric {
    std::string_view name;
    std::string_view section;  // empty on the raw page
    std::string_view unit;
    std::string_view value;  // the text NCU printed
};

// Views a parsed document, which must outlive it. A launch's `values` are aligned with the list
// `metric_columns[columns]` of [key, unit], which index `metric_keys` and `metric_units`. Throws
// cko::Error: unsupported_format when the document is not cko/ncu-report-v3, malformed_input when
// an index is out of range or a launch's values do not match its columns.
class NcuDocumentMetrics {
public:
    explicit NcuDocumentMetrics(const nlohmann::json& document);

    [[nodiscard]] std::size_t launch_count() const noexcept { return launches_->size(); }
    // Every metric of launch i, in the export's order.
    [[nodiscard]] std::vector<DocumentMetric> metrics(std::size_t launch) const;
    // Launch i's first metric named `name` (in `section` when one is given: details pages name
    // a metric by section and name), or nullopt.
    [[nodiscard]] std::optional<DocumentMetric> find(std::size_t launch, std::string_view name,
                                                     std::string_view section = {}) const;

private:
    struct Column {
        std::size_t key = 0;
        std::size_t unit = 0;
    };
    [[nodiscard]] const std::vector<Column>& columns_of(std::size_t launch) const;
    [[nodiscard]] DocumentMetric metric(const Column& c, const nlohmann::json& value) const;

    const nlohmann::json* launches_ = nullptr;
    std::vector<std::string_view> names_, sections_, units_;
    std::vector<std::vector<Column>> lists_;
};

}  // namespace cko::profile::ncu
