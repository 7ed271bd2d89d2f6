#!/usr/bin/env python3
"""Independent check of `cko map --json`: busy union and exposed times recomputed from the file.

Standard library only. It reads the Kineto trace (json / json.gz, timestamps as exact decimals)
or the nsys SQLite export itself, applies the rules of docs/map.md (which rows are GPU work,
the whole-trace window, windows from annotations), and computes with a different method than
cko's sweep: busy = length of the merged union of the GPU intervals clipped to the window, and
exposed(X) = busy(all) - busy(all but X). Every number must agree to the nanosecond.

    python3 tests/map_check.py --trace FILE --map MAP.json [--window NAME]
"""
import argparse
import decimal
import gzip
import json
import sqlite3
import sys

KINETO_GPU = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
              "gpu_memset": "memset", "Memset": "memset"}
KINETO_CPU = {"cuda_runtime", "Runtime", "cuda_driver", "Driver", "cpu_op", "Operator"}
KINETO_ANNOTATION = {"user_annotation", "User annotation"}


def ns(value):
    # Kineto writes microseconds with up to three fraction digits: exact in integer ns.
    return int((decimal.Decimal(str(value)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def kineto_rows(path):
    """(source rows) -> list of (device or None, name, start, end, is_annotation)."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    rows = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        start, dur = ns(e["ts"]), ns(e["dur"])
        if dur < 0:
            continue
        args = e.get("args") or {}
        if cat in KINETO_GPU:
            device = args.get("device", e.get("pid"))
            rows.append((device, e.get("name", ""), start, start + dur, False))
        elif cat in KINETO_CPU or cat in KINETO_ANNOTATION:
            if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
                continue
            rows.append((None, e.get("name", ""), start, start + dur, cat in KINETO_ANNOTATION))
    return rows


def nsys_rows(path):
    db = sqlite3.connect("file:%s?mode=ro&immutable=1" % path, uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables else {}
    rows = []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        for s, e, d, name in db.execute(
                "SELECT start, end, deviceId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            rows.append((d, strings[name], s, e, False))
    kinds = {1: "h2d", 2: "d2h", 8: "d2d", 10: "p2p"}
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        for s, e, d, k in db.execute(
                "SELECT start, end, deviceId, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
            rows.append((d, "[CUDA memcpy %s]" % kinds.get(k, "other"), s, e, False))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for s, e, d in db.execute("SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_MEMSET"):
            rows.append((d, "[CUDA memset]", s, e, False))
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for s, e, name in db.execute("SELECT start, end, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            rows.append((None, strings[name], s, e, False))
    if "NVTX_EVENTS" in tables:
        for s, e, text in db.execute(
                "SELECT ne.start, ne.end, coalesce(sid.value, ne.text, '') FROM NVTX_EVENTS ne "
                "LEFT JOIN StringIds sid ON ne.textId = sid.id "
                "WHERE ne.eventType IN (59, 60, 70, 71) AND ne.end IS NOT NULL"):
            rows.append((None, text, s, e, True))
    return [r for r in rows if r[3] >= r[2]]


def union_length(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def windows(rows, name):
    if not name:
        return [(min(r[2] for r in rows), max(r[3] for r in rows))]
    match = (lambda n: n.startswith(name[:-1])) if name.endswith("*") else (lambda n: n == name)
    return sorted((r[2], r[3]) for r in rows if r[4] and match(r[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--window", default="")
    args = ap.parse_args()
    with open(args.trace, "rb") as f:
        sqlite = f.read(16).startswith(b"SQLite format 3")
    rows = nsys_rows(args.trace) if sqlite else kineto_rows(args.trace)
    with open(args.map) as f:
        doc = json.load(f)
    wins = windows(rows, args.window)
    checked, errors = 0, []
    for part in doc["parts"]:
        device = part["device"]
        gpu = [r for r in rows if r[0] is not None and r[0] == device]
        if len(part["windows"]) != len(wins):
            errors.append("device %s: %d windows in the map, %d here"
                          % (device, len(part["windows"]), len(wins)))
            continue
        for w, (ws, we) in zip(part["windows"], wins):
            clipped = [(r[1], max(r[2], ws), min(r[3], we)) for r in gpu
                       if r[2] < we and r[3] > ws]
            spans = [(s, e) for _, s, e in clipped]
            busy = union_length(spans)
            expect = {("window start", None): ws, ("window end", None): we,
                      ("gpu busy", None): busy}
            for name in {n for n, _, _ in clipped}:
                others = [(s, e) for n, s, e in clipped if n != name]
                expect[("exposed", name)] = busy - union_length(others)
            got = {("window start", None): w["start_ns"], ("window end", None): w["end_ns"],
                   ("gpu busy", None): w["gpu"]["busy_ns"]}
            for item in w["items"]:
                if item["kind"] == "kernel":
                    got[("exposed", item["name"])] = item["exposed_ns"]
            for key in sorted(set(expect) | set(got), key=str):
                checked += 1
                if expect.get(key) != got.get(key):
                    errors.append("device %s window %s %s %s: cko %s, independent %s" % (
                        device, w["occurrence"], key[0], (key[1] or "")[:60], got.get(key),
                        expect.get(key)))
    for e in errors:
        print(e)
    print("%d numbers compared, %d differ" % (checked, len(errors)))
    return 1 if errors or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
