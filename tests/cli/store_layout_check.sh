#!/usr/bin/env bash
# store_layout_check.sh SRC_DIR: exits 1, naming file:line, when a C++ source under SRC_DIR other
# than the store catalogue (store/catalogue.hpp, store/catalogue.cpp) spells a path of the store's
# layout. Tests (*_test.cpp, */testing/*) are left out on purpose: they check the layout on disk
# independently of the catalogue, so a catalogue that moved a file would fail them.
# Not JSON member names (model["experiments"]), comments or text inside messages: only string
# literals that are a layout path, start with one, or are joined onto a path (`/ "invocations"`).
set -euo pipefail
src=${1:?usage: store_layout_check.sh SRC_DIR}
mapfile -d '' sources < <(find "$src" \( -name '*.cpp' -o -name '*.hpp' \) \
  -not -name '*_test.cpp' -not -path '*/testing/*' \
  -not -path '*/store/catalogue.hpp' -not -path '*/store/catalogue.cpp' -print0 | sort -z)
[ ${#sources[@]} -gt 0 ] || { echo "store_layout_check: no sources under $src" >&2; exit 2; }
found=$(awk '
  BEGIN {
    dirs = "(experiments|invocations|champion|selections|objects|sha256|profiles)"
    files = "((target|stop|store|current|request|result|outcome|manifest|process|slurm|node-doctor)\\.json|handoff\\.md|(events|monitor|ledger)\\.jsonl|(stdout|stderr|submit-stdout|submit-stderr|slurm-step)\\.txt|job\\.sh)"
    n = 0
    p[n++] = "\"/?" files "\""                               # a file of the layout, alone or appended
    p[n++] = "\"" dirs "/"                                   # a literal that starts with a layout dir
    p[n++] = "/ \"(" dirs "|driver|workspace|files)\""       # a layout dir joined onto a path
    p[n++] = "\"/(driver|out|files|workspace|profile)(/|\")" # a sub-directory appended as text
    p[n++] = "\"\\.locks?\""                                 # the root lock file and lock directory
    p[n++] = "\"/" dirs "/"                                  # a layout dir inside a path
  }
  {
    code = $0
    sub(/^[ \t]*\/\/.*$/, "", code)        # a comment line
    sub(/[ \t]\/\/[ \t].*$/, "", code)     # a trailing comment
    # The MCP server resource URIs (cko://ROOT/experiments/ID) name records for clients; they are
    # not store paths and never reach the filesystem (the server resolves them through `show`).
    if (FILENAME ~ /mcp\/server\.cpp$/ &&
        (code ~ /add\(root, "(experiments|invocations)\/"/ || code ~ /\{"\/experiments\/", "\/invocations\/"\}/))
      next
    for (i = 0; i < n; i++) if (code ~ p[i]) { print FILENAME ":" FNR ":" $0; break }
  }' "${sources[@]}")
if [ -n "$found" ]; then
  printf '%s\n' "$found"
  echo "store layout spelled outside src/cko/store/catalogue.{hpp,cpp}: name it there and use it" >&2
  exit 1
fi
