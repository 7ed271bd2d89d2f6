#!/usr/bin/env python3
"""A synthetic driver for the verdict-rule tests (issue [18]): `verdict_driver.py --request FILE`, or
`verdict_driver.py --session` (protocol v2: every request of an operation in one process).

Each subject directory holds model.json: {"metrics": {metric: {case: value}}, "noise": relative SD,
"role_bias": {role: relative speed-up}, "metric_role_bias": {role: {metric: relative gain}}}. Every sample of a metric is value * (1 + noise * N(0, 1)),
seeded by the request seed, the subject's role, the case and the metric, so verdicts are known in
advance. role_bias makes the subject look faster (lower values of `lower` metrics, higher of
`higher` ones) whenever it runs in that role: a biased instrument, as two materialized copies of
identical code that differ by placement; metric_role_bias does the same to one metric alone (a copy
that uses a little more memory without running slower).
"""
import json
import os
import random
import sys


def answer(request_path):
    request = json.load(open(request_path))
    case = request["case"]["id"]
    n = request["samples"]
    objective = request["objective"]
    wanted = [objective["primary"]] + list(objective["constraints"])

    def samples(model, role, metric):
        value = model["metrics"][metric["name"]][case]
        bias = model.get("role_bias", {}).get(role, 0.0)
        bias += model.get("metric_role_bias", {}).get(role, {}).get(metric["name"], 0.0)
        if metric["name"] in model.get("higher_is_better", []):
            value *= 1.0 + bias
        else:
            value /= 1.0 + bias
        rng = random.Random(f"{request['seed']}/{role}/{case}/{metric['name']}")
        return [value * (1.0 + model.get("noise", 0.0) * rng.gauss(0.0, 1.0)) for _ in range(n)]

    subjects = []
    for s in request["subjects"]:
        model = json.load(open(os.path.join(s["path"], "model.json")))
        measured = [{"name": m["name"], "unit": m["unit"], "samples": samples(model, s["role"], m)}
                    for m in wanted]
        subjects.append({
            "role": s["role"],
            "correctness": {"status": "passed",
                            "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {"primary": measured[0], "constraints": measured[1:]},
        })
    with open(request["result_path"], "w") as f:
        json.dump({"format_version": "cko/driver-result-v1", "subjects": subjects,
                   "environment": {"pid": os.getpid()}, "artifacts": []}, f)


def main():
    if "--session" not in sys.argv:  # v1: one request, one process
        answer(sys.argv[sys.argv.index("--request") + 1])
        return
    # Protocol v2 (docs/PROTOCOL.md): ready, then one notice per request line until the exit line.
    with open(os.environ["CKO_SESSION_REQUESTS"]) as requests, \
            open(os.environ["CKO_SESSION_NOTICES"], "w") as notices:
        notices.write(json.dumps({"ready": True}) + "\n")
        notices.flush()
        for line in requests:
            message = json.loads(line)
            if message.get("exit"):
                return
            answer(message["request"])
            notices.write(json.dumps({"call": message["call"], "status": "done"}) + "\n")
            notices.flush()


if __name__ == "__main__":
    main()
