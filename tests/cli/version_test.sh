#!/usr/bin/env bash
# The version comes from the git tag (cmake/CkoBuildInfo.cmake, docs/release.md): a scratch git repo
# is tagged, committed to and dirtied, and the real CkoBuildInfo.cmake configured in a project of no
# language at each step; then the built binary's version must follow its own `git describe` by
# the same rules, and self-check must refuse a skill package of another release series.
. "$(dirname "$0")/lib.sh"
repo_root=$PWD
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# probe: the version CkoBuildInfo.cmake gives the scratch repo as it is now.
git_dir=$tmp/clone
mkdir -p "$git_dir/src/cko/util" "$tmp/probe"
cp "$repo_root/src/cko/util/build_info.cpp.in" "$git_dir/src/cko/util/"
cat > "$git_dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(probe VERSION 0.1.0 LANGUAGES NONE)
include($repo_root/cmake/CkoBuildInfo.cmake)
CMAKE
probe() {
  rm -rf "$tmp/probe"
  cmake -S "$git_dir" -B "$tmp/probe" >"$tmp/probe.log" 2>&1 || { cat "$tmp/probe.log" >&2; fail "cmake configure failed"; }
  sed -n 's/.*build_version() { return "\(.*\)"; }/\1/p' "$tmp/probe/generated/cko/util/build_info.cpp"
}
g() { git -C "$git_dir" -c user.name=t -c user.email=t@example.invalid "$@"; }
g init -q
g add -A
g commit -q -m one
sha() { git -C "$git_dir" rev-parse --short HEAD; }

[ "$(probe)" = "0.1.0.dev0+g$(sha)" ] || fail "untagged: $(probe)"
g tag nightly  # not a release tag: ignored
[ "$(probe)" = "0.1.0.dev0+g$(sha)" ] || fail "a non-version tag changed the version: $(probe)"
g tag -a v0.3.0 -m "release 0.3.0"
[ "$(probe)" = "0.3.0" ] || fail "at tag v0.3.0: $(probe)"
grep -q 'build_tag() { return "v0.3.0"; }' "$tmp/probe/generated/cko/util/build_info.cpp" || fail "tag not v0.3.0"
echo "# changed" >> "$git_dir/CMakeLists.txt"
[ "$(probe)" = "0.3.0+g$(sha).dirty" ] || fail "dirty at the tag: $(probe)"
g commit -q -am two
g commit -q --allow-empty -m three
[ "$(probe)" = "0.3.0.post2+g$(sha)" ] || fail "two commits after v0.3.0: $(probe)"
g tag v0.4.0rc1
[ "$(probe)" = "0.4.0rc1" ] || fail "at tag v0.4.0rc1: $(probe)"
g commit -q --allow-empty -m four
g tag v0.5-beta
[ "$(probe)" = "0.4.0rc1.post1+g$(sha)" ] || fail "v0.5-beta is no release version, v0.4.0rc1 is the nearest: $(probe)"
grep -q "git tag 'v0.5-beta' is not v<release version>" "$tmp/probe.log" || fail "no warning about v0.5-beta"
# A new tag moves no HEAD, yet the next build configures again and takes it.
g tag v0.6.0
cmake --build "$tmp/probe" >"$tmp/probe.log" 2>&1 || { cat "$tmp/probe.log" >&2; fail "cmake --build failed"; }
grep -q 'build_version() { return "0.6.0"; }' "$tmp/probe/generated/cko/util/build_info.cpp" ||
  fail "the build after 'git tag v0.6.0' kept $(grep build_version "$tmp/probe/generated/cko/util/build_info.cpp")"

# The binary prints the version its own build info implies (an independent reading of the rules).
expect_rc 0 "$CKO" self-check --json
printf '%s' "$out" | python3 -c '
import json, re, sys
d = json.load(sys.stdin); b = d["build"]
assert d["version"] == b["version"], d
describe, tag, version = b["describe"], b["tag"], b["version"]
assert version.endswith(".dirty") == describe.endswith("-dirty"), b
m = re.fullmatch(r"(.*)-([0-9]+)-g[0-9a-f]+(-dirty)?", describe)
if tag == "none":
    assert re.fullmatch(r"[0-9]+(\.[0-9]+)*\.dev0\+g[0-9a-f]+(\.dirty)?", version), b
elif m and m.group(1) == tag:  # commits after the release tag
    assert version.startswith(f"{tag[1:]}.post{m.group(2)}+g"), b
else:  # at the tag
    assert version == tag[1:] or re.fullmatch(re.escape(tag[1:]) + r"\+g[0-9a-f]+\.dirty", version), b
'
expect_rc 0 "$CKO" --version
contains "$out" "cko $(printf '%s' "$("$CKO" self-check --json)" | field 'd["version"]')"

# A skill package of another release series: self-check fails (exit 3) and says what to install.
cp -r "$repo_root/skills/cuda-kernel-optimizer" "$tmp/skill"
expect_rc 0 "$CKO" self-check --skill "$tmp/skill"
printf '99.1.0\n' > "$tmp/skill/VERSION"
expect_rc 3 "$CKO" self-check --skill "$tmp/skill"
contains "$out" "FAIL skill_package"
contains "$out" "says the skill is for cko 99.1.0"
contains "$out" "pip install 'cko==99.1.*'"
rm "$tmp/skill/VERSION"
expect_rc 3 "$CKO" self-check --skill "$tmp/skill"
contains "$out" "VERSION"
echo "version: ok"
