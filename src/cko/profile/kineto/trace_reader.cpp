// File and gzip (zlib) input for the Kineto importer.
#include "cko/profile/kineto/trace_reader.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <span>

namespace cko::profile::kineto {
namespace {

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

class InflateStream {
public:
    InflateStream() {
        // 15 + 32: accept gzip or zlib headers.
        if (inflateInit2(&z_, 15 + 32) != Z_OK) {
            throw Error(ErrorCode::internal, "zlib inflateInit2 failed");
        }
    }
    ~InflateStream() { inflateEnd(&z_); }
    InflateStream(const InflateStream&) = delete;
    InflateStream& operator=(const InflateStream&) = delete;
    z_stream z_{};
    bool stream_ended = false;
};

void check_text(std::string_view bytes, const std::filesystem::path& path, bool first) {
    if (std::memchr(bytes.data(), '\0', bytes.size()) != nullptr) {
        throw Error(ErrorCode::binary_input,
                    path.string() + " holds NUL bytes: not a JSON trace" +
                        (first ? "" : " (found past the start)"),
                    {{"path", path.string()}});
    }
}

// The file's SHA-256, computed on a second thread while the tokenizer parses the same bytes: each
// chunk is hashed where it lies (the tokenizer's buffer or the gzip input), read-only on both
// threads. wait() comes before anything moves or overwrites those bytes (the next read, the
// tokenizer's next prepare()). A chunk smaller than kAsyncBytes (a small trace) is hashed at once:
// starting a thread would cost more. On a 96 MB trace the hash was a fifth of the verb's time.
class ChunkHasher {
public:
    ChunkHasher() = default;
    ChunkHasher(const ChunkHasher&) = delete;
    ChunkHasher& operator=(const ChunkHasher&) = delete;
    ~ChunkHasher() {
        if (pending_.valid()) {
            pending_.wait();  // never leave the thread reading bytes that are about to go
        }
    }

    void update(std::string_view bytes) {
        wait();
        if (bytes.size() < kAsyncBytes) {
            hash_.update(bytes);
            return;
        }
        pending_ = std::async(std::launch::async, [this, bytes] { hash_.update(bytes); });
    }
    void wait() {
        if (pending_.valid()) {
            pending_.get();
        }
    }
    std::string finish_hex() {
        wait();
        return hash_.finish_hex();
    }

private:
    static constexpr std::size_t kAsyncBytes = std::size_t{256} << 10;
    Sha256 hash_;
    std::future<void> pending_;  // after hash_: destroyed (waited for) first
};

// The trace file, open for reading; refuses one that cannot be opened.
std::unique_ptr<std::FILE, FileCloser> open_trace(const std::filesystem::path& path) {
    std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (!file) {
        throw Error(ErrorCode::io_error,
                    "cannot open " + path.string() + ": " + std::strerror(errno),
                    {{"path", path.string()}});
    }
    return file;
}

// Whether the first chunk starts with the gzip magic bytes.
bool starts_gzip(std::span<const char> raw, std::size_t got) {
    return got >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
           static_cast<unsigned char>(raw[1]) == 0x8b;
}

// Refuses a file whose read failed.
[[noreturn]] void throw_read_error(const std::filesystem::path& path) {
    throw Error(ErrorCode::io_error, "read error on " + path.string(), {{"path", path.string()}});
}

// Refuses a file whose bytes zlib could not inflate (`rc` is inflate's code).
[[noreturn]] void throw_invalid_gzip(const std::filesystem::path& path, const z_stream& z, int rc) {
    throw Error(ErrorCode::malformed_input,
                path.string() +
                    " is not a valid gzip stream: " + (z.msg != nullptr ? z.msg : "inflate failed"),
                {{"path", path.string()}, {"zlib_code", rc}});
}

// Refuses an empty file and a gzip stream cut short; otherwise finishes the tokenizer.
void finish_trace(const ReadResult& result, const InflateStream* inflater,
                  TraceTokenizer& tokenizer, const std::filesystem::path& path) {
    if (result.file_bytes == 0) {
        throw Error(ErrorCode::empty_input, path.string() + " is empty", {{"path", path.string()}});
    }
    if (result.gzip && !inflater->stream_ended) {
        throw Error(ErrorCode::truncated_input, path.string() + ": the gzip stream is cut short",
                    {{"path", path.string()}});
    }
    tokenizer.finish();
}

}  // namespace

ReadResult stream_trace_file(const std::filesystem::path& path, TraceTokenizer& tokenizer,
                             std::size_t chunk_bytes) {
    const std::unique_ptr<std::FILE, FileCloser> file = open_trace(path);
    ReadResult result;
    // Not zeroed: every byte used is read into it first.
    const auto raw_bytes = std::make_unique_for_overwrite<char[]>(chunk_bytes);
    const std::span<char> raw(raw_bytes.get(), chunk_bytes);
    // After `raw`: an error unwinds the hash (which waits for its thread) before the bytes it
    // reads.
    ChunkHasher hash;
    std::unique_ptr<InflateStream> inflater;
    bool first = true;
    while (true) {
        // A plain trace is read straight into the tokenizer's buffer (no copy of every chunk);
        // the first chunk, and every chunk of a gzip file, goes through `raw`.
        const bool direct = !first && !result.gzip;
        hash.wait();  // the last chunk's bytes may move now
        const std::span<char> room = direct ? tokenizer.prepare(chunk_bytes) : raw;
        const std::size_t got = std::fread(room.data(), 1, room.size(), file.get());
        if (got == 0) {
            if (std::ferror(file.get()) != 0) {
                throw_read_error(path);
            }
            break;
        }
        hash.update(std::string_view(room.data(), got));
        result.file_bytes += got;
        if (first) {
            result.gzip = starts_gzip(raw, got);
            if (result.gzip) {
                inflater = std::make_unique<InflateStream>();
            }
        }
        if (!result.gzip) {
            check_text(std::string_view(room.data(), got), path, first);
            if (direct) {
                tokenizer.commit(got);
            } else {
                tokenizer.feed(std::string_view(raw.data(), got));
            }
            result.json_bytes += got;
            first = false;
            continue;
        }
        z_stream& z = inflater->z_;
        z.next_in = reinterpret_cast<Bytef*>(raw.data());
        z.avail_in = static_cast<uInt>(got);
        while (true) {
            if (inflater->stream_ended) {
                if (z.avail_in == 0) {
                    break;
                }
                // Concatenated gzip members (e.g. from `cat a.gz b.gz`) form one stream.
                inflateReset(&z);
                inflater->stream_ended = false;
            }
            const std::span<char> out = tokenizer.prepare(chunk_bytes);
            z.next_out = reinterpret_cast<Bytef*>(out.data());
            z.avail_out = static_cast<uInt>(out.size());
            const int rc = inflate(&z, Z_NO_FLUSH);
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
                throw_invalid_gzip(path, z, rc);
            }
            const std::size_t produced = out.size() - z.avail_out;
            check_text(std::string_view(out.data(), produced), path, first);
            first = false;
            result.json_bytes += produced;
            tokenizer.commit(produced);
            inflater->stream_ended = rc == Z_STREAM_END;
            // Done with this input once it is consumed and zlib holds no pending output.
            if (z.avail_in == 0 && z.avail_out != 0) {
                break;
            }
        }
        first = false;
    }
    finish_trace(result, inflater.get(), tokenizer, path);
    result.sha256 = hash.finish_hex();
    return result;
}

}  // namespace cko::profile::kineto
