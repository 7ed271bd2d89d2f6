// Reading facts out of parser documents, each into the one vocabulary with its scope.
#include "cko/knowledge/fact_documents.hpp"

#include "cko/fact/fact_id.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

namespace cko::knowledge {
namespace {

void add_facts(FactSet& set, const Json& facts, fact::Producer producer, const std::string& scope,
               const std::string& file) {
    if (!facts.is_array()) {
        return;
    }
    for (const Json& f : facts) {
        if (!f.is_object() || !f.contains("id") || !f["id"].is_string() || !f.contains("value") ||
            !f["value"].is_number()) {
            continue;
        }
        const std::string id = fact::qualified_fact_id(producer, f["id"].get<std::string>());
        const fact::FactIdSpec* spec = fact::lookup_fact_id(id);
        const std::string unit = f.value("unit", "");
        if (spec == nullptr || spec->producer != producer || unit != spec->unit) {
            ++set.outside_vocabulary;
            continue;
        }
        set.facts.push_back(ObservedFact{id, f["value"].get<double>(), unit, scope, file});
    }
}

std::string text(const Json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void add_sass_kernels(FactSet& set, const Json& doc, const std::string& file) {
    for (const Json& k : doc.value("kernels", Json::array())) {
        add_facts(set, k.value("facts", Json::array()), fact::Producer::sass,
                  fmt::format("{} [{}]", text(k, "name"), text(k, "arch")), file);
    }
}

}  // namespace

void add_fact_document(FactSet& set, const Json& doc, const std::string& file) {
    const std::string format = doc.is_object() ? text(doc, "format_version") : std::string();
    if (format == "cko/ncu-report-v1" || format == "cko/ncu-report-v2" ||
        format == "cko/ncu-report-v3") {
        for (const Json& l : doc.value("launches", Json::array())) {
            const std::string scope =
                l.contains("id") && l["id"].is_number_integer()
                    ? fmt::format("{} (launch {})", text(l, "kernel"), l["id"].get<std::int64_t>())
                    : text(l, "kernel");
            add_facts(set, l.value("facts", Json::array()), fact::Producer::ncu, scope, file);
        }
    } else if (format == "cko/sass-report-v1") {
        add_sass_kernels(set, doc, file);
    } else if (format == "cko/ptxas-report-v1") {
        for (const Json& f : doc.value("functions", Json::array())) {
            add_facts(set, f.value("facts", Json::array()), fact::Producer::ptxas,
                      fmt::format("{} [{}]", text(f, "name"), text(f, "arch")), file);
        }
    } else if (format == "cko/triton-cache-v1") {
        for (const Json& k : doc.value("kernels", Json::array())) {
            add_facts(set, k.value("facts", Json::array()), fact::Producer::triton, text(k, "name"),
                      file);
            if (k.contains("sass") && k["sass"].is_object()) {
                add_sass_kernels(set, k["sass"], file);
            }
        }
    } else if (doc.is_object() && doc.contains("facts") && doc["facts"].is_array()) {
        const std::size_t before = set.facts.size() + set.outside_vocabulary;
        for (const Json& f : doc["facts"]) {
            const std::string id = f.is_object() ? text(f, "id") : std::string();
            const fact::FactIdSpec* spec = fact::lookup_fact_id(id);
            if (spec == nullptr) {
                ++set.outside_vocabulary;
                continue;
            }
            add_facts(set, Json::array({f}), spec->producer, text(f, "scope"), file);
        }
        if (set.facts.size() + set.outside_vocabulary == before) {
            throw Error(ErrorCode::unsupported_format,
                        fmt::format("--facts {}: its facts list is empty", file),
                        Json{{"path", file}});
        }
    } else {
        throw Error(
            ErrorCode::unsupported_format,
            fmt::format("--facts {}: format_version \"{}\" holds no facts cko reads; pass the "
                        "--json output of `cko profile ncu`, `cko sass`, `cko ptxas` or "
                        "`cko triton` (or a document with a top-level \"facts\" list)",
                        file, format),
            Json{{"path", file}, {"format_version", format}});
    }
    set.documents.push_back(fmt::format("{} ({})", file, format.empty() ? "facts" : format));
}

}  // namespace cko::knowledge
