// Where a record's values enter (a Target's spec, an experiment's contract): one error form naming
// the field, the problem and the fix; one check of a closed word; and a collector that reports
// every problem of a record at once.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cko::eval {

// Throws Error(code, "FIELD: PROBLEM; FIX") with details {field, problem, fix}.
[[noreturn]] void field_error(ErrorCode code, const std::string& field, const std::string& problem,
                              const std::string& fix);

// `value` must be one of `allowed`; otherwise field_error: "\"x\" is not allowed; use one of: a,
// b".
void one_of(ErrorCode code, const std::string& field, const std::string& value,
            std::span<const std::string_view> allowed);

inline void one_of(ErrorCode code, const std::string& field, const std::string& value,
                   std::initializer_list<std::string_view> allowed) {
    one_of(code, field, value, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

// A closed word (CKO_CLOSED_ENUM): the enumerator `value` spells, or one_of's error.
template <class Enum>
[[nodiscard]] Enum closed_word(ErrorCode code, const std::string& field, const std::string& value) {
    one_of(code, field, value, spellings_of<Enum>());
    return *closed_enum_from_name<Enum>(value);
}

// Every problem of one record, collected: a check that throws an Error of the collector's code is
// kept and the next check runs; any other error (a field too long, a missing file) goes through.
class FieldProblems {
public:
    explicit FieldProblems(ErrorCode code) : code_(code) {}

    // Runs `f`; returns false when it reported a problem.
    bool check(const std::function<void()>& f);
    void add(const std::string& field, const std::string& problem, const std::string& fix);
    [[nodiscard]] bool empty() const { return problems_.empty(); }
    [[nodiscard]] const std::vector<Error>& problems() const { return problems_; }

    // Nothing when there is no problem; else one Error of the collector's code: the problem's own
    // message, or "N problems: a | b"; details {field, problem, fix} of the first and `problems`,
    // every one as {field, message, fix}.
    void throw_if_any() const;

private:
    ErrorCode code_;
    std::vector<Error> problems_;
};

}  // namespace cko::eval
