#!/usr/bin/env bash
# One module knows the store's paths: no C++ source under src/cko but the store catalogue
# (src/cko/store/catalogue.{hpp,cpp}) spells a path of the layout (tests/cli/store_layout_check.sh).
# The check must be able to fail: each kind of spelling planted in a copy of the tree is caught,
# naming the file and line; JSON member names and comments are not paths and pass.
. "$(dirname "$0")/lib.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
check="$repo/tests/cli/store_layout_check.sh"

expect_rc 0 bash "$check" "$repo/src/cko"

plant() {  # plant LINE: a copy of src/cko with LINE added to eval/history.cpp must fail the check
  rm -rf "$tmp/src"; cp -r "$repo/src/cko" "$tmp/src"
  printf '%s\n' "$1" >> "$tmp/src/eval/history.cpp"
  expect_rc 1 bash "$check" "$tmp/src"
  contains "$out" "$tmp/src/eval/history.cpp:"
  contains "$err" "store layout spelled outside"
}
plant 'const auto a = store.read_record("target.json");'
plant 'const auto b = store.read_record("experiments/" + id + ".json");'
plant 'const auto c = store.root() / "invocations" / id;'
plant 'const auto d = dir + "/request.json";'
plant 'const auto e = call_dir + "/out";'
plant 'const auto f = store.root() / "champion" / "selections";'
plant 'const auto g = root / ".lock";'
plant 'const auto h = rel + "/events.jsonl";'
plant 'const auto i = call_dir / "stderr.txt";'
# Also in a new file of another layer, and in a header.
rm -rf "$tmp/src"; cp -r "$repo/src/cko" "$tmp/src"
printf 'inline const char* k = "champion/current.json";\n' > "$tmp/src/report/planted.hpp"
expect_rc 1 bash "$check" "$tmp/src"
contains "$out" "$tmp/src/report/planted.hpp:1:"

# Not paths: JSON member names, comments, message text; tests are left out on purpose.
rm -rf "$tmp/src"; cp -r "$repo/src/cko" "$tmp/src"
cat >> "$tmp/src/eval/history.cpp" <<'CPP'
// invocations/<id>/request.json is read through the catalogue
const Json n = model["experiments"];  // "experiments/" in a comment
const std::string m = "an invocation without its request.json (cut short)";
CPP
printf 'const auto t = s.read_record("target.json");\n' >> "$tmp/src/eval/history_test.cpp"
expect_rc 0 bash "$check" "$tmp/src"
