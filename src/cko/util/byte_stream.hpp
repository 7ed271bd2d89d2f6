// The two shapes a stream of bytes takes between the file, zstd and tar layers of util.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace cko {

// Takes the next piece of a stream.
using ByteSink = std::function<void(std::string_view)>;
// Fills up to `size` bytes of `buffer` and says how many; 0 only at the end of the input.
using ByteSource = std::function<std::size_t(char* buffer, std::size_t size)>;

}  // namespace cko
