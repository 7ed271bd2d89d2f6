#!/usr/bin/env python3
"""Summarizes the outcome JSONs that validation-torch-loop.sh left under OUTDIR/<workload>/: per workload
the baseline's resolution, and per candidate each verdict with its effect, interval, pairs, GPU seconds
per pair and GPU seconds to the verdict (screen, then screen + confirm). Prints one JSON document.

Usage: python3 scripts/validation_summary.py OUTDIR [WORKLOAD ...]
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def comparison(doc):
    """The figures of one screen/confirm/audit outcome (None when it did not run or printed no JSON)."""
    if not doc or "result" not in doc:
        return None
    r = doc["result"]
    o, cost = r.get("outputs", {}), r.get("cost", {})
    pairs = len(o.get("pairs", []))
    est = o.get("estimate") or {}
    gpu_s = cost.get("gpu_s", 0.0)
    return {"id": doc.get("id"), "state": r.get("state"), "verdict": o.get("verdict"), "decision": o.get("decision"),
            "effect": o.get("effect_text"), "ci": [est.get("ci_low"), est.get("ci_high")] if est else None,
            "reason": (r.get("reason") or o.get("reason") or "")[:600], "pairs": pairs,
            "driver_calls": cost.get("driver_calls"), "gpu_s": gpu_s, "wall_s": cost.get("wall_s"),
            "gpu_s_per_pair": gpu_s / pairs if pairs else None}


def workload(dirpath):
    steps = {}
    if os.path.exists(os.path.join(dirpath, "steps.tsv")):
        for line in open(os.path.join(dirpath, "steps.tsv")):
            label, rc, wall = line.rstrip("\n").split("\t")
            steps[label] = {"exit": int(rc), "wall_s": float(wall)}
    out = {"steps": steps}
    doctor = load(os.path.join(dirpath, "doctor.json"))
    if doctor:
        ident = doctor.get("identity", {})
        out["gpus"] = [g.get("name") for g in ident.get("gpus", [])]
        out["gpu_topology"] = ident.get("gpu_topology")
    if steps.get("freeze", {}).get("exit", 0) != 0:
        err = os.path.join(dirpath, "freeze.err")
        out["freeze_error"] = open(err).read()[-1500:] if os.path.exists(err) else "freeze failed"
    base = load(os.path.join(dirpath, "baseline.json"))
    if base and "result" in base:
        o = base["result"].get("outputs", {})
        out["baseline"] = {"resolution": o.get("resolution"), "aa_verdict": o.get("aa", {}).get("verdict"),
                           "gpu_s": base["result"].get("cost", {}).get("gpu_s"),
                           "wall_s": base["result"].get("cost", {}).get("wall_s")}
    candidates = {}
    for label in sorted(l[len("new-"):] for l in steps if l.startswith("new-")):
        screen = comparison(load(os.path.join(dirpath, f"screen-{label}.json")))
        confirm = comparison(load(os.path.join(dirpath, f"confirm-{label}.json")))
        c = {"screen": screen, "confirm": confirm}
        if screen:
            c["gpu_s_to_screen_verdict"] = screen["gpu_s"]
        if screen and confirm:
            c["gpu_s_to_confirm_verdict"] = screen["gpu_s"] + confirm["gpu_s"]
        champ = steps.get(f"champion-{label}")
        if champ:
            c["champion_select_exit"] = champ["exit"]
        candidates[label] = c
    out["candidates"] = candidates
    out["audit"] = comparison(load(os.path.join(dirpath, "audit.json")))
    hist = load(os.path.join(dirpath, "history.json"))
    out["history_entries"] = len(hist.get("entries", hist.get("history", []))) if isinstance(hist, dict) else None
    return out


def main():
    outdir = sys.argv[1]
    names = sys.argv[2:] or sorted(d for d in os.listdir(outdir) if os.path.exists(os.path.join(outdir, d, "steps.tsv")))
    print(json.dumps({name: workload(os.path.join(outdir, name)) for name in names}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
