// The end of a driver's stderr, with per-call subject markers (a driver without the running-subject
// file) folded into one.
#include "cko/driver/stderr_tail.hpp"

#include "cko/util/files.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <vector>

namespace cko::driver {

std::string stderr_tail_of(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    if (text.empty()) {
        return "";
    }
    std::vector<std::string_view> lines;  // every line but the markers
    std::size_t markers = 0;
    std::string_view last_marker;
    std::size_t last_marker_at = 0;  // the number of other lines before it
    for (std::size_t start = 0;;) {
        const std::size_t nl = text.find('\n', start);
        const std::string_view line =
            text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        if (line.starts_with(kSubjectMarker)) {
            ++markers;
            last_marker = line;
            last_marker_at = lines.size();
        } else {
            lines.push_back(line);
        }
        if (nl == std::string_view::npos) {
            break;
        }
        start = nl + 1;
    }
    const std::size_t keep = markers > 0 && max_lines > 0 ? max_lines - 1 : max_lines;
    const std::size_t first = lines.size() > keep ? lines.size() - keep : 0;
    std::string body;
    const auto add = [&body](std::string_view line) {
        body += body.empty() ? "" : "\n";
        body += line;
    };
    if (markers > 0 && last_marker_at < first) {
        add(last_marker);  // who was running, though the lines after it fill the tail
    }
    for (std::size_t i = first; i <= lines.size(); ++i) {
        if (markers > 0 && i == last_marker_at && last_marker_at >= first) {
            add(last_marker);
        }
        if (i < lines.size()) {
            add(lines[i]);
        }
    }
    if (body.size() > max_bytes) {
        body = "…" + std::string(utf8_tail(body, max_bytes));
        if (markers > 0 && body.find(last_marker) == std::string::npos) {
            body = std::string(last_marker) + "\n" + body;  // the cut must not lose who ran
        }
    }
    return markers > 1 ? fmt::format("({} subject marker lines left out)\n{}", markers - 1, body)
                       : body;
}

std::string stderr_tail(const std::filesystem::path& file, std::size_t max_lines,
                        std::size_t max_bytes) {
    constexpr std::size_t kWindow = 256 << 10;
    return stderr_tail_of(read_file_tail(file, kWindow), max_lines, max_bytes);
}

}  // namespace cko::driver
