// Throughput of the NCU importer in process: a synthetic >= 200 MB details export and a 100 MB raw
// page, the parse and the tokenizer alone, and the raw page's --json document written.
#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/util/files.hpp"

#include <benchmark/benchmark.h>

#include <ostream>
#include <streambuf>
#include <string>

namespace {

// The real H200 details export, its launches repeated with fresh IDs until the text passes
// 200 MB: the same mix of sections, units, rule rows and long descriptions as a real report.
const std::string& synthetic_details() {
    static const std::string text = [] {
        const std::string fixture = cko::read_file_capped(
            std::string(CKO_SOURCE_DIR) + "/tests/fixtures/ncu/ncu_details.csv", 1 << 20);
        const std::size_t body = fixture.find('\n') + 1;
        std::string out = fixture.substr(0, body);
        out.reserve(std::size_t{210} << 20);
        int id = 0;
        while (out.size() < std::size_t{200} << 20) {
            std::size_t pos = body;
            std::string last_id;
            while (pos < fixture.size()) {
                const std::size_t end = fixture.find('\n', pos) + 1;
                const std::size_t close = fixture.find('"', pos + 1);
                const std::string row_id = fixture.substr(pos + 1, close - pos - 1);
                if (row_id != last_id) {
                    last_id = row_id;
                    ++id;
                }
                out += '"';
                out += std::to_string(id);
                out.append(fixture, close, end - close);
                pos = end;
            }
        }
        return out;
    }();
    return text;
}

// The real H200 raw page (one row per launch, 555 metric columns, mostly cells of 1 to 8 bytes),
// its launch rows repeated with fresh IDs until the text passes 100 MB; header, units row and the
// ==PROF== lines before them come once.
const std::string& synthetic_raw() {
    static const std::string text = [] {
        const std::string fixture = cko::read_file_capped(
            std::string(CKO_SOURCE_DIR) + "/tests/fixtures/ncu/ncu_raw.csv", 1 << 20);
        const std::size_t header = fixture.find("\"ID\",");
        const std::size_t units = fixture.find('\n', header) + 1;
        const std::size_t body = fixture.find('\n', units) + 1;
        std::string out = fixture.substr(0, body);
        out.reserve(std::size_t{101} << 20);
        int id = 0;
        while (out.size() < std::size_t{100} * 1000 * 1000) {
            for (std::size_t pos = body; pos < fixture.size();) {
                const std::size_t end = fixture.find('\n', pos) + 1;
                const std::size_t close = fixture.find('"', pos + 1);
                out += '"';
                out += std::to_string(id++);
                out.append(fixture, close, end - close);
                pos = end;
            }
        }
        return out;
    }();
    return text;
}

void report_rate(benchmark::State& state, std::size_t bytes) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
    state.counters["MB/s"] = benchmark::Counter(
        static_cast<double>(state.iterations() * bytes) / 1e6, benchmark::Counter::kIsRate);
}

void BM_ParseNcuDetails(benchmark::State& state) {
    const std::string& text = synthetic_details();
    std::size_t launches = 0;
    for (auto _ : state) {
        const cko::profile::ncu::NcuReport report = cko::profile::ncu::parse_ncu_csv(text);
        launches = report.launches.size();
        benchmark::DoNotOptimize(report.launches.data());
    }
    report_rate(state, text.size());
    state.counters["launches"] = static_cast<double>(launches);
}
BENCHMARK(BM_ParseNcuDetails)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_TokenizeNcuDetails(benchmark::State& state) {
    const std::string& text = synthetic_details();
    for (auto _ : state) {
        cko::profile::ncu::CsvTokenizer tokenizer(text);
        cko::profile::ncu::CsvRow row;
        std::size_t cells = 0;
        while (tokenizer.next(row)) {
            cells += row.cells.size();
        }
        benchmark::DoNotOptimize(cells);
    }
    report_rate(state, text.size());
}
BENCHMARK(BM_TokenizeNcuDetails)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ParseNcuRaw(benchmark::State& state) {
    const std::string& text = synthetic_raw();
    std::size_t launches = 0;
    for (auto _ : state) {
        const cko::profile::ncu::NcuReport report = cko::profile::ncu::parse_ncu_csv(text);
        launches = report.launches.size();
        benchmark::DoNotOptimize(report.launches.data());
    }
    report_rate(state, text.size());
    state.counters["launches"] = static_cast<double>(launches);
}
BENCHMARK(BM_ParseNcuRaw)->Unit(benchmark::kMillisecond)->Iterations(3);

// The raw page's `--json` document (cko/ncu-report-v3, with the roofline `profile ncu` adds by
// default) written to a stream that drops the bytes: the verb's output phase alone, MB/s of the
// CSV read and of the document written.
void BM_WriteNcuRawJson(benchmark::State& state) {
    const std::string& text = synthetic_raw();
    const cko::profile::ncu::NcuReport report = cko::profile::ncu::parse_ncu_csv(text);
    cko::profile::ncu::ReportJsonExtras extras;
    cko::profile::ncu::add_roofline(extras, cko::profile::ncu::choose_roofline(report, {}));
    struct Counting : std::streambuf {
        std::size_t bytes = 0;
        std::streamsize xsputn(const char*, std::streamsize n) override {
            bytes += static_cast<std::size_t>(n);
            return n;
        }
        int_type overflow(int_type c) override {
            ++bytes;
            return traits_type::not_eof(c);
        }
    } sink;
    std::ostream out(&sink);
    for (auto _ : state) {
        cko::profile::ncu::write_report_json(report, out, extras);
    }
    report_rate(state, text.size());
    state.counters["document_MB/s"] =
        benchmark::Counter(static_cast<double>(sink.bytes) / 1e6, benchmark::Counter::kIsRate);
    state.counters["document_MB"] =
        static_cast<double>(sink.bytes) / 1e6 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_WriteNcuRawJson)->Unit(benchmark::kMillisecond)->Iterations(10);

// The tokenizer alone on the raw page: the quote bitmap (byte_scan.hpp) against cells of a few
// bytes, where a memchr per cell was slower than the cell.
void BM_TokenizeNcuRaw(benchmark::State& state) {
    const std::string& text = synthetic_raw();
    for (auto _ : state) {
        cko::profile::ncu::CsvTokenizer tokenizer(text);
        cko::profile::ncu::CsvRow row;
        std::size_t cells = 0;
        while (tokenizer.next(row)) {
            cells += row.cells.size();
        }
        benchmark::DoNotOptimize(cells);
    }
    report_rate(state, text.size());
}
BENCHMARK(BM_TokenizeNcuRaw)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
