// The typed, closed TOML table reader behind cko.toml (target_spec.cpp): every key read is
// remembered, so a key nothing read is reported as unknown, and every mistake is an invalid_spec
// error naming the field, the problem and the fix.
#pragma once

#include "cko/eval/field_problems.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>
#include "cko/eval/toml_guard.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>
#include <string>
#include <string_view>

namespace cko::eval::spec_detail {

[[noreturn]] inline void bad(const std::string& field, const std::string& problem,
                             const std::string& fix) {
    field_error(ErrorCode::invalid_spec, field, problem, fix);
}

// One TOML table with the path it sits at; every key read is remembered so that leftovers can be
// reported as unknown (the spec is closed: a typo must not silently become a default).
class Table {
public:
    Table(const toml::table* t, std::string path) : t_(t), path_(std::move(path)) {}

    [[nodiscard]] bool present() const { return t_ != nullptr; }
    [[nodiscard]] std::string field(std::string_view key) const {
        return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
    }
    const toml::node* node(std::string_view key) {
        seen_.insert(std::string(key));
        return t_ == nullptr ? nullptr : t_->get(key);
    }
    [[nodiscard]] bool has(std::string_view key) const {
        return t_ != nullptr && t_->contains(key);
    }

    // "missing", or "missing (found \"minimum_efect_pct\": did you mean minimum_effect_pct?)" when
    // a key that nothing reads is within two edits of it.
    [[nodiscard]] std::string missing(std::string_view key) const {
        if (t_ != nullptr) {
            for (const auto& [k, v] : *t_) {
                const std::string other(k.str());
                if (other != key && edit_distance(other, key) <= 2) {
                    return fmt::format("missing (found \"{}\": did you mean {}?)", other, key);
                }
            }
        }
        return "missing";
    }

    static std::size_t edit_distance(std::string_view a, std::string_view b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) {
            row[j] = j;
        }
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t diagonal = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t above = row[j];
                row[j] = std::min(
                    {row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diagonal = above;
            }
        }
        return row[b.size()];
    }

    std::string string(std::string_view key, const char* fix,
                       std::optional<std::string> fallback = std::nullopt) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            if (fallback) {
                return *fallback;
            }
            bad(field(key), missing(key), fix);
        }
        if (!n->is_string()) {
            bad(field(key), fmt::format("expected a string, got {}", type_of(*n)), fix);
        }
        std::string v = **n->as_string();
        if (v.empty()) {
            bad(field(key), "empty", fix);
        }
        return v;
    }

    double number(std::string_view key, const char* fix,
                  std::optional<double> fallback = std::nullopt) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            if (fallback) {
                return *fallback;
            }
            bad(field(key), missing(key), fix);
        }
        double v = 0;
        if (n->is_integer()) {
            v = static_cast<double>(**n->as_integer());
        } else if (n->is_floating_point()) {
            v = **n->as_floating_point();
        } else {
            bad(field(key), fmt::format("expected a number, got {}", type_of(*n)), fix);
        }
        if (!std::isfinite(v)) {
            bad(field(key), "not a finite number", fix);
        }
        return v;
    }

    int integer(std::string_view key, const char* fix, int fallback) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            return fallback;
        }
        if (!n->is_integer()) {
            bad(field(key), fmt::format("expected an integer, got {}", type_of(*n)), fix);
        }
        const auto v = **n->as_integer();
        if (v < 0 || v > 1000000) {
            bad(field(key), fmt::format("{} is out of range", v), fix);
        }
        return static_cast<int>(v);
    }

    bool boolean(std::string_view key, const char* fix, bool fallback) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            return fallback;
        }
        if (!n->is_boolean()) {
            bad(field(key), fmt::format("expected true or false, got {}", type_of(*n)), fix);
        }
        return **n->as_boolean();
    }

    std::vector<std::string> strings(std::string_view key, const char* fix, bool required,
                                     bool allow_empty = false) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            if (required) {
                bad(field(key), missing(key), fix);
            }
            return {};
        }
        const toml::array* a = n->as_array();
        if (a == nullptr) {
            bad(field(key), fmt::format("expected an array of strings, got {}", type_of(*n)), fix);
        }
        std::vector<std::string> out;
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& item = *a->get(i);
            if (!item.is_string() || (**item.as_string()).empty()) {
                bad(fmt::format("{}[{}]", field(key), i), "expected a non-empty string", fix);
            }
            out.push_back(**item.as_string());
        }
        if (out.empty() && !allow_empty) {
            bad(field(key), "empty", fix);
        }
        return out;
    }

    Table table(std::string_view key, bool required, const char* fix) {
        const toml::node* n = node(key);
        if (n == nullptr) {
            if (required) {
                bad(field(key), "missing table", fix);
            }
            return Table(nullptr, field(key));
        }
        if (!n->is_table()) {
            bad(field(key), fmt::format("expected a table, got {}", type_of(*n)), fix);
        }
        return Table(n->as_table(), field(key));
    }

    // Rejects keys that were never asked for, naming the known ones.
    void close(std::initializer_list<std::string_view> extra_known = {}) const {
        if (t_ == nullptr) {
            return;
        }
        std::vector<std::string> unknown;
        for (const auto& [k, v] : *t_) {
            const std::string key(k.str());
            const bool known =
                seen_.contains(key) ||
                std::find(extra_known.begin(), extra_known.end(), key) != extra_known.end();
            if (!known) {
                unknown.push_back(key);
            }
        }
        if (unknown.empty()) {
            return;
        }
        // Every unknown key of the table at once, each with its nearest known name.
        std::vector<std::string> names(seen_.begin(), seen_.end());
        std::vector<std::string> hints;
        for (const auto& key : unknown) {
            std::string best;
            std::size_t best_distance = 3;
            for (const auto& n : names) {
                const std::size_t d = edit_distance(key, n);
                if (d < best_distance) {
                    best = n;
                    best_distance = d;
                }
            }
            hints.push_back(best.empty() ? key : fmt::format("{} (did you mean {}?)", key, best));
        }
        bad(field(unknown.front()),
            unknown.size() == 1 ? "unknown key"
                                : fmt::format("unknown keys: {}", fmt::join(hints, ", ")),
            unknown.size() == 1 && hints.front() != unknown.front()
                ? fmt::format("rename it: {}", hints.front())
                : fmt::format("remove them or use one of: {}", fmt::join(names, ", ")));
    }

    static std::string type_of(const toml::node& n) {
        switch (n.type()) {
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a float";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::table:
            return "a table";
        default:
            return "a date/time";
        }
    }

private:
    const toml::table* t_;
    std::string path_;
    std::set<std::string> seen_;
};

}  // namespace cko::eval::spec_detail
