// zstd (libzstd) streaming: compress bytes into a sink, decompress a source's bytes, one frame
// with its content checksum, so a bundle is written and read without holding it in memory.
#pragma once

#include "cko/util/byte_stream.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cko {

// Compresses what write() is given into one zstd frame (single-threaded at a fixed level, with
// the content checksum): the same bytes in give the same bytes out with the same libzstd.
class ZstdCompressor {
public:
    ZstdCompressor(ByteSink sink, int level);
    ~ZstdCompressor();
    ZstdCompressor(const ZstdCompressor&) = delete;
    ZstdCompressor& operator=(const ZstdCompressor&) = delete;

    void write(std::string_view bytes);
    // Ends the frame and hands the rest to the sink; write() may not follow.
    void finish();
    [[nodiscard]] std::uint64_t bytes_in() const noexcept { return bytes_in_; }
    [[nodiscard]] std::uint64_t bytes_out() const noexcept { return bytes_out_; }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::uint64_t bytes_in_ = 0;
    std::uint64_t bytes_out_ = 0;
};

// Decompresses zstd frames read from `source`. A corrupt stream (a changed byte fails the
// content checksum) is malformed_input and a stream cut short truncated_input, both naming
// `name` (the file).
class ZstdDecompressor {
public:
    ZstdDecompressor(ByteSource source, std::string name);
    ~ZstdDecompressor();
    ZstdDecompressor(const ZstdDecompressor&) = delete;
    ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;

    // Up to `size` decompressed bytes; 0 at the end of the last frame.
    [[nodiscard]] std::size_t read(char* buffer, std::size_t size);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cko
