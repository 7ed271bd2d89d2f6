#!/usr/bin/env python3
"""A misbehaving-on-demand driver for the runtime tests: `fake_driver.py BEHAVIOUR --request FILE`."""
import json
import math
import os
import subprocess
import sys
import time


def main():
    behaviour = sys.argv[1]
    request = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
    n = request["samples"]
    out_dir = request["output_dir"]

    def subject(role, value=1.5):
        primary = request["objective"]["primary"]
        return {
            "role": role,
            "correctness": {"status": "passed", "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {
                "primary": {"name": primary["name"], "unit": primary["unit"], "samples": [value] * n},
                "constraints": [{"name": c["name"], "unit": c["unit"], "samples": [1.0] * n}
                                for c in request["objective"]["constraints"]],
            },
        }

    result = {"format_version": "cko/driver-result-v1",
              "subjects": [subject(s["role"]) for s in request["subjects"]],
              "environment": {"pid": os.getpid()}, "artifacts": []}

    # Tell the test which processes exist, so it can check none survives.
    pids_file = os.environ.get("FAKE_PIDS")
    if behaviour in ("hang", "ignore_term", "grandchild_hang"):
        child = subprocess.Popen(["sleep", "300"])
        if pids_file:
            with open(pids_file, "w") as f:
                f.write(f"{os.getpid()} {child.pid}\n")
        if behaviour == "ignore_term":
            import signal
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(300)
    if behaviour == "from_files":  # each subject's values come from values.json in its snapshot
        for sub, req in zip(result["subjects"], request["subjects"]):
            values = json.load(open(os.path.join(req["path"], "values.json")))
            m = sub["measurements"]
            m["primary"]["samples"] = [values[m["primary"]["name"]]] * n
            for c in m["constraints"]:
                c["samples"] = [values[c["name"]]] * n
    if behaviour == "fail":
        print("CUDA error: out of memory", file=sys.stderr)
        sys.exit(3)
    if behaviour == "no_result":
        return
    if behaviour == "nan":
        result["subjects"][0]["measurements"]["primary"]["samples"][0] = math.nan
    if behaviour == "wrong_count":
        result["subjects"][0]["measurements"]["primary"]["samples"].append(1.0)
    if behaviour == "extra_file":
        open(os.path.join(out_dir, "scratch.bin"), "w").write("x")
    if behaviour == "huge_stdout":
        chunk = "y" * 65536 + "\n"
        for _ in range(400):  # 26 MB, beyond the 8 MiB capture cap
            sys.stdout.write(chunk)
        sys.stdout.flush()
    if behaviour == "sleep_then_ok":
        stamp = os.environ.get("FAKE_STAMPS")
        with open(stamp, "a") as f:
            f.write(f"start {time.time()}\n")
        time.sleep(0.6)
        with open(stamp, "a") as f:
            f.write(f"end {time.time()}\n")
    # json.dump writes NaN as a bare literal, as careless drivers do.
    with open(request["result_path"], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
