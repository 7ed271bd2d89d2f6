// `cko mcp` answers: tools/list (every verb's schema, the goal is well under 50 ms) and ping,
// through the server in process (no pipe), so the number is the server's own cost.
#include "cko/mcp/server.hpp"

#include <benchmark/benchmark.h>

namespace {

void BM_ToolsList(benchmark::State& state) {
    std::size_t bytes = 0;
    cko::mcp::Server server(cko::mcp::ServerOptions{},
                            [&bytes](const cko::Json& m) { bytes += m.dump().size(); });
    const cko::Json request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}};
    for (auto _ : state) {
        server.handle(request);
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_ToolsList)->Unit(benchmark::kMillisecond);

// A fresh server builds its tool list once (the verb table and every schema): the start-up cost.
void BM_ServerStartAndToolsList(benchmark::State& state) {
    const cko::Json request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}};
    for (auto _ : state) {
        cko::mcp::Server server(cko::mcp::ServerOptions{},
                                [](const cko::Json& m) { benchmark::DoNotOptimize(m); });
        server.handle(request);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ServerStartAndToolsList)->Unit(benchmark::kMillisecond);

}  // namespace
