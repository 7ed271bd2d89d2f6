// Streams a trace file (plain or gzip) into a TraceTokenizer, hashing the bytes on the way.
#pragma once

#include "cko/profile/kineto/trace_tokenizer.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace cko::profile::kineto {

struct ReadResult {
    std::string sha256;  // of the file as stored (compressed bytes for .gz)
    std::uint64_t file_bytes = 0;
    std::uint64_t json_bytes = 0;  // after decompression
    bool gzip = false;             // detected by the gzip magic, not the file name
};

// Reads the whole file through `tokenizer` in chunks of `chunk_bytes` and calls finish().
// Throws empty_input, binary_input (NUL bytes in the JSON text), malformed_input (corrupt
// gzip), truncated_input (gzip stream cut short), io_error.
ReadResult stream_trace_file(const std::filesystem::path& path, TraceTokenizer& tokenizer,
                             std::size_t chunk_bytes = std::size_t{4} << 20);

}  // namespace cko::profile::kineto
