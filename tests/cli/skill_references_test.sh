#!/usr/bin/env bash
# The skill package's request formats (references/requests.md) are the verb table's schemas as
# `cko mcp` lists them: regenerated here, they must equal the committed file.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python3 "$repo/scripts/skill-references.py" "$CKO" "$tmp/requests.md"
diff -u "$repo/skills/cuda-kernel-optimizer/references/requests.md" "$tmp/requests.md" > "$tmp/diff" ||
  fail "references/requests.md is stale: run scripts/skill-references.py build/cko ($(head -c 2000 "$tmp/diff"))"
# The loop's verbs have their sections, with the keys an agent needs.
for tool in doctor target_freeze baseline experiment_new screen confirm champion_select history status wait; do
  grep -q "^## \`$tool\` " "$tmp/requests.md" || fail "requests.md has no section for $tool"
done
grep -q '^| `experiment` | string | ' "$tmp/requests.md" || fail "confirm's experiment key is not listed"
