#!/usr/bin/env bash
# The skill's rules of conduct and its install procedure are promises to the user: each rule is
# found in SKILL.md by its stable title, so deleting or renaming one fails this test.
# skill_rules_test.sh [SKILL.md]: checks another copy (the default is the repository's).
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
skill=${1:-$repo/skills/cuda-kernel-optimizer/SKILL.md}
[ -f "$skill" ] || fail "no $skill"
has() { grep -qF -- "$1" "$skill" || fail "$skill lacks $2: '$1'"; }

has '## Rules of conduct' "the rules-of-conduct section"
has '**Never download or invent a workload.**' "the no-invented-workload rule"
has '**No business-level claim without a workload at that layer.**' "the claim-layer rule"
has '**The authorization is a limit, not a suggestion.**' "the authorization rule"
has '**A first readiness check within minutes.**' "the first-check rule"
has 'the 10-minute first check' "the first check's procedure"
has '`cko doctor`' "the first check's doctor step"
has 'a smoke of the user'"'"'s own workload' "the first check's smoke step"
has '**Outside advice proposes; local evidence decides.**' "the outside-advice rule"
has '**One writer per store.**' "the one-writer rule"

has '## Install: find cko first' "the install section"
has '`command -v cko`' "how the skill finds cko on PATH"
has '`cko --version`' "the version check"
has '`make build`' "the from-source install"
has 'npx skills add <repo> --skill cuda-kernel-optimizer' "the skill install command"

# What the rules cite must exist: the [limits] keys and claim layers in cko init's template, the
# read-only MCP server, `cko --version`.
(cd "$tmp" && "$CKO" init --name skill-rules >/dev/null)
for key in wall_seconds_budget gpu_seconds_budget deadline claim_layer; do
  grep -q "^#* *$key = " "$tmp/cko.toml" || fail "cko init's template has no $key, which SKILL.md cites"
done
grep -q 'kernel | workload | serving' "$tmp/cko.toml" || fail "the claim layers SKILL.md names changed"
expect_rc 0 "$CKO" --version
contains "$out" "cko "
expect_rc 0 "$CKO" mcp --help
contains "$out" "--read-only"
echo "skill rules: all present in $skill"
