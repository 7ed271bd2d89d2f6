#!/usr/bin/env python3
"""No upward includes: every `#include "cko/<layer>/..."` in src/cko/<L>/ names L itself or a layer L's
CMake DEPS reach (src/cko/*/CMakeLists.txt, transitively); anything else is printed with its file and
line, and the exit status is 1.  scripts/include-layers.py [REPO]  (ctest include_layers)"""
import os, re, glob, sys
root = sys.argv[1] if len(sys.argv) > 1 else "."
src = os.path.join(root, "src/cko")
layers = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
deps = {l: set() for l in layers}
for cm in glob.glob(os.path.join(src, "**/CMakeLists.txt"), recursive=True):
    layer = os.path.relpath(cm, src).split(os.sep)[0]
    text = open(cm).read()
    for m in re.finditer(r"\bcko_([a-z]+)", text):
        d = m.group(1)
        if d in deps and d != layer:
            deps[layer].add(d)
# the library names of a layer's own sub-libraries (cko_profile_ncu) map to the layer by prefix
def closure(l, seen=None):
    seen = seen or set()
    for d in deps[l]:
        if d not in seen:
            seen.add(d); closure(d, seen)
    return seen
bad = []
for f in glob.glob(os.path.join(src, "**/*.[ch]pp"), recursive=True):
    layer = os.path.relpath(f, src).split(os.sep)[0]
    allowed = closure(layer) | {layer}
    for n, line in enumerate(open(f, encoding="utf-8"), 1):
        m = re.match(r'\s*#include "cko/([a-z_]+)/', line)
        if m and m.group(1) not in allowed:
            bad.append(f"{os.path.relpath(f, root)}:{n}: includes cko/{m.group(1)}/, not a layer {layer} depends on")
print("\n".join(bad) if bad else f"layers: {len(layers)}, 0 upward includes")
sys.exit(1 if bad else 0)
