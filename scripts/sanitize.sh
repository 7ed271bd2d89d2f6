#!/usr/bin/env bash
# Every test again under clang's ASan+UBSan (leaks included), in build-fuzz/ (the compile `make fuzz`
# reuses). The suites whose time is Python, Node, Chromium or Slurm (the torch examples, the
# npm-installed MCP/skills clients, the browser, the one-node cluster) are left to `make test`: their
# cko calls are the same verbs the CLI suites drive here under the sanitizers. So are the checks of
# the tree that run no cko (the mutation table's shape, function sizes, include layers). So are four
# CLI suites of verdict rules on synthetic drivers (cli_loop_cases, cli_verdict_rules,
# cli_conclusion, cli_decision_walk: 134 s of test time here under the sanitizers, 71 s of wall
# at -j2): the verdict code they reach runs here through the eval and verbs unit tests and
# cli_loop, cli_decision, cli_trust and cli_session, and CI's whole run has a 50-minute goal.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fuzz-build.sh
cmake --build "$build" -j "$jobs"
skip='^(python_sdk_and_examples|python_gpu|cli_examples_torch|cli_validation_loop|mcp_node_install|mcp_sdk|skills_install|cli_report_browser|cli_slurm|cli_loop_cases|cli_verdict_rules|cli_conclusion|cli_decision_walk|mutation_table|function_size|function_size_scanner|include_layers)$'
cd "$build"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs" -E "$skip"
