#!/usr/bin/env python3
"""A torch.profiler chrome trace of torch-serving's servers replaying the request mix (for `cko profile
torch` and `cko map`). Needs transformers, like the driver.

Usage: python3 profile_trace.py OUT.json [--case main|small] [--replays N] [--subjects original,candidates/x]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import driver  # noqa: E402
from driver import torch  # noqa: E402


class _Case:
    def __init__(self, path):
        self.path = path

    def load_json(self):
        with open(self.path) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--case", default="main")
    ap.add_argument("--replays", type=int, default=2)
    ap.add_argument("--subjects", default="original,candidates/batched")
    a = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    work = driver.Serving(device)
    try:
        work.setup(type("R", (), {"case": _Case(os.path.join(HERE, "cases", a.case + ".json"))})())
    except RuntimeError as e:
        raise SystemExit(f"profile_trace: {e}")
    states = {}
    for name in a.subjects.split(","):
        states[name] = work.prepare(type("S", (), {"path": os.path.join(HERE, name)})(), None)
        work.run(states[name])  # warm-up outside the trace
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for name, state in states.items():
            with torch.profiler.record_function(f"subject:{name}"):
                for _ in range(a.replays):
                    work.run(state)
    prof.export_chrome_trace(a.out)
    print(f"profile_trace: {', '.join(states)} x{a.replays} on {device} -> {a.out}")


if __name__ == "__main__":
    main()
