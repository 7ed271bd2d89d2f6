// Formatting of percents, intervals, durations and times, and HTML/Markdown escaping.
#include "cko/report/text.hpp"

#include "cko/eval/judge.hpp"
#include "cko/stats/paired_estimate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

namespace cko::report {
namespace {

// The words of `text` split at spaces (runs of spaces count as one).
std::vector<std::string> words_of(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : text) {
        if (c == ' ') {
            if (!word.empty()) {
                words.push_back(std::move(word));
                word.clear();
            }
        } else {
            word += c;
        }
    }
    if (!word.empty()) {
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string md_cell(std::string_view text) {
    if (text.empty()) {
        return "–";
    }
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '|') {
            out += "\\|";
        } else if (c == '\n' || c == '\r') {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::string one_line(std::string_view text, std::size_t max_chars) {
    std::string out;
    for (const char c : text) {
        out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    if (out.size() <= max_chars) {
        return out;
    }
    std::size_t cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) {
        --cut;  // never split a UTF-8 sequence
    }
    return out.substr(0, cut) + "…";
}

std::string value_text(const Json& value) {
    if (value.is_null()) {
        return "none";
    }
    if (value.is_array()) {
        return list_text(value);
    }
    return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string verdict_or_state(const Json& comparison) {
    const std::string verdict = comparison.value("verdict", Json("")).is_string()
                                    ? comparison.value("verdict", "")
                                    : std::string();
    return verdict.empty() ? comparison.value("state", "") : verdict;
}

std::string text_of(const Json& record, const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string list_text(const Json& list) {
    if (!list.is_array()) {
        return value_text(list);
    }
    std::string out;
    for (const auto& item : list) {
        out += (out.empty() ? "" : ", ") + value_text(item);
    }
    return out.empty() ? "none" : out;
}

std::vector<std::string> wrap_text(std::string_view text, std::size_t max_chars) {
    std::vector<std::string> lines;
    std::string line;
    for (const std::string& word : words_of(one_line(text, text.size()))) {
        if (!line.empty() && line.size() + 1 + word.size() > max_chars) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) {
        lines.push_back(line);
    }
    return lines;
}

std::string pct_text(double pct) {
    if (!std::isfinite(pct)) {
        return "–";
    }
    const double mag = std::fabs(pct);
    // Three significant figures, never fewer than one decimal below 100 %.
    const std::string digits = mag >= 100  ? fmt::format("{:.0f}", mag)
                               : mag >= 10 ? fmt::format("{:.1f}", mag)
                                           : fmt::format("{:.2f}", mag);
    if (digits == "0.00" || digits == "0") {
        return "0 %";
    }
    return fmt::format("{}{} %", pct < 0 ? "−" : "+", digits);
}

std::string pct_text(const Json& pct) {
    return pct.is_number() ? pct_text(pct.get<double>()) : "–";
}

std::string interval_text(const Json& entry) {
    const Json lo = entry.value("ci_low_pct", Json());
    const Json hi = entry.value("ci_high_pct", Json());
    if (!lo.is_number() || !hi.is_number()) {
        return "–";
    }
    return fmt::format("[{}, {}]", pct_text(lo), pct_text(hi));
}

std::string effect_words(const Json& pct, stats::Direction direction, const std::string& metric) {
    if (!pct.is_number()) {
        return "no estimate";
    }
    return eval::describe_effect(stats::pct_to_log(pct.get<double>()), direction, metric);
}

std::string seconds_text(double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0) {
        return "0 s";
    }
    if (seconds < 60) {
        return fmt::format("{:.1f} s", seconds);
    }
    const auto total = static_cast<long long>(std::llround(seconds));
    if (total < 3600) {
        return fmt::format("{} min {:02} s", total / 60, total % 60);
    }
    return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

std::string utc_text(std::int64_t unix_s) {
    const std::time_t t = unix_s;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

}  // namespace cko::report
