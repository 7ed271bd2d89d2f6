#!/usr/bin/env python3
"""A synthetic three-case workload for the loop tests, written with the Python SDK.

Each subject directory holds model.json: {"factor": {case: speed-up}, "crash_on": case, "wrong_on":
case, "error_on": case, "sleep_s": seconds, "failed_on": case, "wrong_if_exists": path,
"slow_if_exists": path, "crash_if_exists": path}. A call's latency is BASE[case] / factor with a 0.3 %
seeded jitter, so verdicts are known in advance; crash_on kills the driver with SIGSEGV while that
subject runs (as a candidate's native code would), wrong_on reports a wrong result, error_on makes
prepare fail the way a compile error does, failed_on reports status "failed" with a metric inside
the threshold (the driver's own check failed), wrong_if_exists reports a wrong result on every case
once that file exists (so a subject can pass its baseline and fail later), slow_if_exists makes the
subject run at half the original's speed on every case once that file exists (so a champion can be
confirmed improved and then fail its audit), crash_if_exists kills the driver with SIGSEGV while
that subject runs once that file exists (so an original can pass its freeze and crash later),
"hang_after_calls": N with "count_file": path makes the subject's calls after its Nth (counted in
that file, across processes) sleep an hour in prepare, so that an operation is surely still running
when a test cancels it.
"""
import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from cko_driver import Workload, run_driver  # noqa: E402

BASE_US = {"a": 100.0, "b": 250.0, "c": 40.0}


def prepare(subject, request):
    with open(os.path.join(subject.path, "model.json")) as f:
        model = json.load(f)
    case = request.case.id
    if model.get("error_on") == case:
        raise RuntimeError("nvcc: kernel.cu(12): error: identifier \"blockDimx\" is undefined")
    if "hang_after_calls" in model:
        with open(model["count_file"], "a+") as f:
            f.write("call\n")
            f.seek(0)
            if len(f.readlines()) > model["hang_after_calls"]:
                time.sleep(3600)
    rng = random.Random(f"{request.seed}/{subject.role}/{case}")
    return {"model": model, "case": case, "rng": rng}


def run(state):
    model = state["model"]
    if model.get("crash_on") == state["case"] or (
            "crash_if_exists" in model and os.path.exists(model["crash_if_exists"])):
        os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(state["model"].get("sleep_s", 0.0))


def latency(state, _elapsed_ns):
    model = state["model"]
    factor = model.get("factor", {}).get(state["case"], 1.0)
    if "slow_if_exists" in model and os.path.exists(model["slow_if_exists"]):
        factor = 0.5
    return BASE_US[state["case"]] / factor * (1.0 + 0.003 * state["rng"].uniform(-1.0, 1.0))


def check(state):
    model = state["model"]
    wrong = model.get("wrong_on") == state["case"] or (
        "wrong_if_exists" in model and os.path.exists(model["wrong_if_exists"]))
    if model.get("failed_on") == state["case"]:
        return ("failed", {"max_rel_err": 0.0})
    return {"max_rel_err": 0.5 if wrong else 0.0}


if __name__ == "__main__":
    sys.exit(run_driver(Workload.from_functions(prepare, run, check, primary_value=latency), warmup_s=0.0))
