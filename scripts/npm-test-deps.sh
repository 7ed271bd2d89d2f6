#!/usr/bin/env bash
# Installs the npm packages of tests/mcp/ (the MCP TypeScript SDK, the skills CLI) exactly as its
# lock file pins them, into DIR (default build/tests/mcp-node); does nothing when DIR already holds
# that lock's install. Needs registry.npmjs.org the first time (or a warm npm cache).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/build/tests/mcp-node}"
mkdir -p "$dir"
stamp="$dir/node_modules/.cko-lock-sha256"
want=$(sha256sum "$repo/tests/mcp/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm-test-deps: npm is missing; run scripts/deps.sh (Debian: nodejs npm)" >&2; exit 1; }
cp "$repo/tests/mcp/package.json" "$repo/tests/mcp/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || {
  echo "npm-test-deps: npm ci failed in $dir: registry.npmjs.org unreachable and no cached packages?" >&2
  exit 1
}
echo "$want" > "$stamp"
echo "npm-test-deps: tests/mcp packages installed in $dir"
