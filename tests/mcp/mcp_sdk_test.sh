#!/usr/bin/env bash
# ctest mcp_sdk: `cko mcp` driven by the official MCP TypeScript SDK (tests/mcp/mcp_sdk_test.mjs).
# Fails (never skips) when the pinned packages cannot be installed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${CKO_MCP_NODE_DIR:?set CKO_MCP_NODE_DIR to the npm install dir}"
bash "$repo/scripts/npm-test-deps.sh" "$dir"
# ESM resolves packages from the script's folder: the test runs from the install dir.
cp "$repo/tests/mcp/mcp_sdk_test.mjs" "$dir/"
node "$dir/mcp_sdk_test.mjs" "${CKO:?}" "$repo"
