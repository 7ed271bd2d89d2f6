// The one error form, closed-word check and problem collector of the values entering a record.
#include "cko/eval/field_problems.hpp"

#include <fmt/format.h>

namespace cko::eval {

void field_error(ErrorCode code, const std::string& field, const std::string& problem,
                 const std::string& fix) {
    throw Error(code, fmt::format("{}: {}; {}", field, problem, fix),
                Json{{"field", field}, {"problem", problem}, {"fix", fix}});
}

void one_of(ErrorCode code, const std::string& field, const std::string& value,
            std::span<const std::string_view> allowed) {
    for (const auto& a : allowed) {
        if (a == value) {
            return;
        }
    }
    field_error(code, field, fmt::format("\"{}\" is not allowed", value),
                fmt::format("use one of: {}", fmt::join(allowed, ", ")));
}

bool FieldProblems::check(const std::function<void()>& f) {
    try {
        f();
        return true;
    } catch (const Error& e) {
        if (e.code() != code_) {
            throw;
        }
        problems_.push_back(e);
        return false;
    }
}

void FieldProblems::add(const std::string& field, const std::string& problem,
                        const std::string& fix) {
    (void)check([&] { field_error(code_, field, problem, fix); });
}

void FieldProblems::throw_if_any() const {
    if (problems_.empty()) {
        return;
    }
    std::vector<std::string> lines;
    Json list = Json::array();
    for (const auto& p : problems_) {
        lines.emplace_back(p.what());
        list.push_back(Json{{"field", p.details().value("field", "")},
                            {"message", p.what()},
                            {"fix", p.details().value("fix", "")}});
    }
    const Json& first = problems_.front().details();
    throw Error(code_,
                problems_.size() == 1
                    ? lines.front()
                    : fmt::format("{} problems: {}", problems_.size(), fmt::join(lines, " | ")),
                Json{{"field", first.value("field", "")},
                     {"problem", first.value("problem", "")},
                     {"fix", first.value("fix", "")},
                     {"problems", list}});
}

}  // namespace cko::eval
