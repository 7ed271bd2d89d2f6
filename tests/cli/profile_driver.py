#!/usr/bin/env python3
"""The driver of tests/cli/profile_collect_test.sh's torch Target: `profile_driver.py --request FILE`.

What it does is read from `profile_mode` in its working directory (the Target's folder, not an
identity path, so that the test can change it between calls):
  trace      a result without the SDK; asked for a trace (request.profile), it copies the real Kineto
             trace tests/fixtures/torch/torch_trace.json to trace_path and lists it; reports torch
             2.11.0 (the torch that wrote that trace)
  ignore     the same result, but no trace (a driver that does not know request.profile)
  sdk        a small CPU workload through the Python SDK, which runs torch.profiler itself
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sdk", "python"))


def mode():
    try:
        with open("profile_mode") as f:
            return f.read().strip()
    except OSError:
        return "trace"


def by_hand(request_path, write_trace):
    with open(request_path) as f:
        request = json.load(f)
    n = request["samples"]
    primary = request["objective"]["primary"]
    artifacts = []
    profile = request.get("profile")
    if profile is not None and write_trace:
        shutil.copyfile(os.path.join(HERE, "..", "fixtures", "torch", "torch_trace.json"), profile["trace_path"])
        artifacts.append(os.path.basename(profile["trace_path"]))
    result = {
        "format_version": "cko/driver-result-v1",
        "subjects": [{
            "role": s["role"],
            "correctness": {"status": "passed", "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {"primary": {"name": primary["name"], "unit": primary["unit"], "samples": [2.0] * n},
                             "constraints": []},
        } for s in request["subjects"]],
        "environment": {"software": {"torch": "2.11.0"}},
        "artifacts": artifacts,
    }
    with open(request["result_path"], "w") as f:
        json.dump(result, f)
    return 0


def with_sdk():
    from cko_driver import Workload, run_driver

    class Sum(Workload):
        def prepare(self, subject, request):
            return list(range(1000))

        def run(self, state):
            sum(state)

        def check(self, state):
            return {"max_rel_err": 0.0}

    return run_driver(Sum(), warmup_s=0.0)


def main():
    m = mode()
    if m == "sdk":
        return with_sdk()
    return by_hand(sys.argv[sys.argv.index("--request") + 1], write_trace=(m == "trace"))


if __name__ == "__main__":
    sys.exit(main())
