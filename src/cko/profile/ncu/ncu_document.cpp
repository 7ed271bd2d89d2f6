// NcuDocumentMetrics: a v3 document's columns resolved once, values read per launch.
#include "cko/profile/ncu/ncu_document.hpp"

#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <string>

namespace cko::profile::ncu {
namespace {

[[noreturn]] void malformed(const std::string& what) {
    throw Error(ErrorCode::malformed_input, fmt::format("ncu document: {}", what));
}

const nlohmann::json& member(const nlohmann::json& object, const char* name,
                             nlohmann::json::value_t type) {
    const auto it = object.find(name);
    if (it == object.end() || it->type() != type) {
        malformed(fmt::format("'{}' is missing or of the wrong type", name));
    }
    return *it;
}

std::string_view text_of(const nlohmann::json& value, const char* what) {
    if (!value.is_string()) {
        malformed(fmt::format("{} is not a string", what));
    }
    return value.get_ref<const std::string&>();
}

std::size_t index_of(const nlohmann::json& value, std::size_t bound, const char* what) {
    if (!value.is_number_unsigned() || value.get<std::uint64_t>() >= bound) {
        malformed(fmt::format("{} is not an index below {}", what, bound));
    }
    return static_cast<std::size_t>(value.get<std::uint64_t>());
}

}  // namespace

NcuDocumentMetrics::NcuDocumentMetrics(const nlohmann::json& document) {
    const auto format = document.is_object() ? document.find("format_version") : document.end();
    if (format == document.end() || *format != kNcuReportFormat) {
        throw Error(ErrorCode::unsupported_format,
                    fmt::format("not a {} document", kNcuReportFormat));
    }
    using T = nlohmann::json::value_t;
    for (const nlohmann::json& k : member(document, "metric_keys", T::array)) {
        if (!k.is_object()) {
            malformed("a metric key is not an object");
        }
        names_.push_back(text_of(member(k, "name", T::string), "a metric name"));
        const auto section = k.find("section");
        sections_.push_back(section != k.end() && section->is_string()
                                ? std::string_view(section->get_ref<const std::string&>())
                                : std::string_view());
    }
    for (const nlohmann::json& u : member(document, "metric_units", T::array)) {
        units_.push_back(text_of(u, "a metric unit"));
    }
    for (const nlohmann::json& list : member(document, "metric_columns", T::array)) {
        if (!list.is_array()) {
            malformed("a list of metric columns is not an array");
        }
        std::vector<Column>& columns = lists_.emplace_back();
        columns.reserve(list.size());
        for (const nlohmann::json& c : list) {
            if (!c.is_array() || c.size() != 2) {
                malformed("a metric column is not [key, unit]");
            }
            columns.push_back(Column{index_of(c[0], names_.size(), "a column's key"),
                                     index_of(c[1], units_.size(), "a column's unit")});
        }
    }
    launches_ = &member(document, "launches", T::array);
}

const std::vector<NcuDocumentMetrics::Column>& NcuDocumentMetrics::columns_of(
    std::size_t launch) const {
    if (launch >= launches_->size()) {
        malformed(fmt::format("no launch {}", launch));
    }
    const nlohmann::json& l = (*launches_)[launch];
    if (!l.is_object()) {
        malformed("a launch is not an object");
    }
    const std::vector<Column>& columns =
        lists_[index_of(member(l, "columns", nlohmann::json::value_t::number_unsigned),
                        lists_.size(), "a launch's columns")];
    if (member(l, "values", nlohmann::json::value_t::array).size() != columns.size()) {
        malformed(fmt::format("launch {} has {} values for {} columns", launch, l["values"].size(),
                              columns.size()));
    }
    return columns;
}

DocumentMetric NcuDocumentMetrics::metric(const Column& c, const nlohmann::json& value) const {
    return DocumentMetric{names_[c.key], sections_[c.key], units_[c.unit],
                          text_of(value, "a metric value")};
}

std::vector<DocumentMetric> NcuDocumentMetrics::metrics(std::size_t launch) const {
    const std::vector<Column>& columns = columns_of(launch);
    const nlohmann::json& values = (*launches_)[launch]["values"];
    std::vector<DocumentMetric> out;
    out.reserve(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) {
        out.push_back(metric(columns[i], values[i]));
    }
    return out;
}

std::optional<DocumentMetric> NcuDocumentMetrics::find(std::size_t launch, std::string_view name,
                                                       std::string_view section) const {
    const std::vector<Column>& columns = columns_of(launch);
    const nlohmann::json& values = (*launches_)[launch]["values"];
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const Column& c = columns[i];
        if (names_[c.key] == name && (section.empty() || sections_[c.key] == section)) {
            return metric(c, values[i]);
        }
    }
    return std::nullopt;
}

}  // namespace cko::profile::ncu
