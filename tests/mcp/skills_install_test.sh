#!/usr/bin/env bash
# ctest skills_install: the skill package installed with the real `skills` CLI (npm, pinned in
# tests/mcp/package-lock.json) into a scratch project's agents folder, then `cko self-check`
# against the installed copy. Fails (never skips) when the packages cannot be installed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${CKO_MCP_NODE_DIR:?set CKO_MCP_NODE_DIR to the npm install dir}"
bash "$repo/scripts/npm-test-deps.sh" "$dir"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/project" "$tmp/home"
cd "$tmp/project"
# No telemetry, no prompts, a home of its own: the install touches nothing outside $tmp.
HOME="$tmp/home" DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 CI=1 \
  node "$dir/node_modules/skills/bin/cli.mjs" add "$repo/skills/cuda-kernel-optimizer" \
  --agent claude-code --yes --copy > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; exit 1; }
installed="$tmp/project/.claude/skills/cuda-kernel-optimizer"
[ -f "$installed/SKILL.md" ] || { cat "$tmp/install.log" >&2; echo "FAIL: no SKILL.md in $installed" >&2; exit 1; }
[ -d "$installed/references" ] || { echo "FAIL: the installed copy lacks references/" >&2; exit 1; }

"${CKO:?}" self-check --skill "$installed" --json > "$tmp/check.json"
python3 - "$tmp/check.json" "$installed" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True, d
skill = {c["name"]: c for c in d["checks"]}["skill_package"]
assert skill["ok"] and sys.argv[2] in skill["detail"], skill
build = d["build"]
assert build["version"] == d["version"] and build["commit"], build
assert len(build["commit"]) == 40 or build["commit"] == "unknown", build
print("skills install + self-check: ok;", build)
PY
# A broken installed copy fails the check, exit 3, naming the file.
printf 'no front matter\n' > "$installed/SKILL.md"
rc=0; "$CKO" self-check --skill "$installed" > "$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: a broken skill copy gave exit $rc, expected 3" >&2; exit 1; }
grep -q "FAIL skill_package" "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
