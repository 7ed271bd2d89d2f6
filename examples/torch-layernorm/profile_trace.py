#!/usr/bin/env python3
"""A torch.profiler chrome trace of the original and the candidates of torch-layernorm, a few calls each
(for `cko profile torch` and `cko map`). CPU activities always; CUDA activities on a GPU.

Usage: python3 profile_trace.py OUT.json [--case main|small] [--calls N] [--subjects original,candidates/x]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import driver  # noqa: E402  (the driver's LayerNorm workload and its subject loader)
from driver import torch  # noqa: E402


class _Case:
    def __init__(self, path):
        self.path = path

    def load_json(self):
        import json
        with open(self.path) as f:
            return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--case", default="main")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--subjects", default="original,candidates/triton_fused")
    a = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    work = driver.LayerNorm(device)
    work.setup(type("R", (), {"case": _Case(os.path.join(HERE, "cases", a.case + ".json"))})())
    states = {}
    for name in a.subjects.split(","):
        try:
            states[name] = work.prepare(type("S", (), {"path": os.path.join(HERE, name)})(), None)
            work.run(states[name])  # warm-up (and Triton's compile) outside the trace
        except Exception as e:
            print(f"profile_trace: {name} skipped: {type(e).__name__}: {e}", file=sys.stderr)
            states.pop(name, None)
    if not states:
        raise SystemExit("profile_trace: no subject could run")
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
        torch.cuda.synchronize()
    with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
        for name, state in states.items():
            with torch.profiler.record_function(f"subject:{name}"):
                for _ in range(a.calls):
                    work.run(state)
                if device == "cuda":
                    torch.cuda.synchronize()
    prof.export_chrome_trace(a.out)
    print(f"profile_trace: {', '.join(states)} x{a.calls} on {device} -> {a.out}")


if __name__ == "__main__":
    main()
