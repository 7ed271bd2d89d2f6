#!/usr/bin/env python3
"""A fast deterministic driver for the crash harness: each subject's latency is the number in its speed.txt
(+-1 % noise), so a candidate with a smaller number is `improved` and the loop reaches a champion quickly."""
import json
import os
import random
import sys


def main():
    request = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
    n = request["samples"]
    primary = request["objective"]["primary"]
    rng = random.Random(request.get("seed", 0) ^ os.getpid())
    subjects = []
    for s in request["subjects"]:
        base = float(open(os.path.join(s["path"], "speed.txt")).read())
        subjects.append({
            "role": s["role"],
            "correctness": {"status": "passed", "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {
                "primary": {"name": primary["name"], "unit": primary["unit"],
                            "samples": [base * (1 + rng.uniform(-0.01, 0.01)) for _ in range(n)]},
                "constraints": [],
            },
        })
    with open(request["result_path"], "w") as f:
        json.dump({"format_version": "cko/driver-result-v1", "subjects": subjects, "environment": {}, "artifacts": []}, f)


if __name__ == "__main__":
    main()
