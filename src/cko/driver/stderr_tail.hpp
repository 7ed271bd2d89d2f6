// The end of a driver's stderr as a reason, an error's details or a report quotes it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace cko::driver {

// A driver may write `cko: subject ROLE case ID` to stderr before each subject runs, which is how a
// crash is attributed when it keeps no running-subject file (running_subject.hpp; the SDKs keep
// that file and write no such line unless it cannot be made). A paired request writes it before
// every timed call: ~2 000 lines, folded here into the last one.
inline constexpr std::string_view kSubjectMarker = "cko: subject ";

// At most `max_lines` lines and about `max_bytes` bytes of the end of `text`, trailing newlines
// dropped. The subject markers are left out but for the last one, kept (first, when the lines
// after it fill the tail) so the tail still says who was running; what was left out is counted in
// a first line "(N subject marker lines left out)". A cut lands on a UTF-8 boundary, marked "…".
[[nodiscard]] std::string stderr_tail_of(std::string_view text, std::size_t max_lines,
                                         std::size_t max_bytes);

// stderr_tail_of over the last 256 KiB of `file` ("" when it cannot be read).
[[nodiscard]] std::string stderr_tail(const std::filesystem::path& file, std::size_t max_lines,
                                      std::size_t max_bytes);

}  // namespace cko::driver
