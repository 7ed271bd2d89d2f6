// zstd streaming through libzstd's ZSTD_compressStream2 / ZSTD_decompressStream.
#include "cko/util/zstd_stream.hpp"

#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <vector>

namespace cko {

struct ZstdCompressor::Impl {
    ZSTD_CCtx* ctx = nullptr;
    ByteSink sink;
    std::vector<char> out = std::vector<char>(ZSTD_CStreamOutSize());
    bool finished = false;
};

namespace {

void require_zstd_ok(std::size_t code, std::string_view what) {
    if (ZSTD_isError(code) != 0U) {
        throw Error(ErrorCode::internal, fmt::format("zstd {}: {}", what, ZSTD_getErrorName(code)));
    }
}

}  // namespace

ZstdCompressor::ZstdCompressor(ByteSink sink, int level) : impl_(std::make_unique<Impl>()) {
    impl_->sink = std::move(sink);
    impl_->ctx = ZSTD_createCCtx();
    if (impl_->ctx == nullptr) {
        throw Error(ErrorCode::internal, "cannot create a zstd compression context");
    }
    require_zstd_ok(ZSTD_CCtx_setParameter(impl_->ctx, ZSTD_c_compressionLevel, level), "level");
    require_zstd_ok(ZSTD_CCtx_setParameter(impl_->ctx, ZSTD_c_checksumFlag, 1), "checksum");
    require_zstd_ok(ZSTD_CCtx_setParameter(impl_->ctx, ZSTD_c_nbWorkers, 0), "workers");
}

ZstdCompressor::~ZstdCompressor() {
    ZSTD_freeCCtx(impl_->ctx);
}

void ZstdCompressor::write(std::string_view bytes) {
    if (impl_->finished) {
        throw Error(ErrorCode::internal, "zstd stream written after finish");
    }
    bytes_in_ += bytes.size();
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    while (in.pos < in.size) {
        ZSTD_outBuffer out{impl_->out.data(), impl_->out.size(), 0};
        require_zstd_ok(ZSTD_compressStream2(impl_->ctx, &out, &in, ZSTD_e_continue), "compress");
        if (out.pos > 0) {
            bytes_out_ += out.pos;
            impl_->sink(std::string_view(impl_->out.data(), out.pos));
        }
    }
}

void ZstdCompressor::finish() {
    if (impl_->finished) {
        return;
    }
    impl_->finished = true;
    ZSTD_inBuffer in{nullptr, 0, 0};
    std::size_t left = 1;
    while (left != 0) {
        ZSTD_outBuffer out{impl_->out.data(), impl_->out.size(), 0};
        left = ZSTD_compressStream2(impl_->ctx, &out, &in, ZSTD_e_end);
        require_zstd_ok(left, "end of frame");
        if (out.pos > 0) {
            bytes_out_ += out.pos;
            impl_->sink(std::string_view(impl_->out.data(), out.pos));
        }
    }
}

struct ZstdDecompressor::Impl {
    ZSTD_DCtx* ctx = nullptr;
    ByteSource source;
    std::string name;
    std::vector<char> in = std::vector<char>(ZSTD_DStreamInSize());
    ZSTD_inBuffer input{nullptr, 0, 0};
    std::size_t frame_left = 0;  // the last ZSTD_decompressStream hint: 0 = a frame just ended
    bool any_input = false;
    bool source_done = false;
};

ZstdDecompressor::ZstdDecompressor(ByteSource source, std::string name)
    : impl_(std::make_unique<Impl>()) {
    impl_->source = std::move(source);
    impl_->name = std::move(name);
    impl_->ctx = ZSTD_createDCtx();
    if (impl_->ctx == nullptr) {
        throw Error(ErrorCode::internal, "cannot create a zstd decompression context");
    }
}

ZstdDecompressor::~ZstdDecompressor() {
    ZSTD_freeDCtx(impl_->ctx);
}

std::size_t ZstdDecompressor::read(char* buffer, std::size_t size) {
    Impl& d = *impl_;
    ZSTD_outBuffer out{buffer, size, 0};
    while (out.pos == 0 && size > 0) {
        if (d.input.pos == d.input.size && !d.source_done) {
            const std::size_t got = d.source(d.in.data(), d.in.size());
            d.source_done = got == 0;
            d.any_input = d.any_input || got > 0;
            d.input = ZSTD_inBuffer{d.in.data(), got, 0};
        }
        const bool starved = d.input.pos == d.input.size && d.source_done;
        if (starved && d.any_input && d.frame_left == 0) {
            return 0;  // the last frame ended with the input
        }
        d.frame_left = ZSTD_decompressStream(d.ctx, &out, &d.input);
        if (ZSTD_isError(d.frame_left) != 0U) {
            throw Error(ErrorCode::malformed_input,
                        fmt::format("{}: not a valid zstd stream ({}): the file is damaged or is "
                                    "not a cko bundle",
                                    d.name, ZSTD_getErrorName(d.frame_left)),
                        Json{{"file", d.name}});
        }
        if (starved && out.pos == 0) {
            throw Error(ErrorCode::truncated_input,
                        fmt::format("{}: the zstd stream ends before its frame does (a file cut "
                                    "short)",
                                    d.name),
                        Json{{"file", d.name}});
        }
    }
    return out.pos;
}

}  // namespace cko
