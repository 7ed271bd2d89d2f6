#!/usr/bin/env python3
"""A session driver speaking protocol v2 by hand: `session_driver.py BEHAVIOUR (--session | --request FILE)`.

Behaviours: ok, hang_on_3, crash_on_3, exit_early_on_3, double_notice, never_ready, exit_before_ready,
bad_ready, slow_start_SECONDS (sleeps before its ready notice). Each session process writes
its pid (and that of a child it keeps running, so that the test sees the whole group killed) to
$SESSION_PIDS. The smoke calls of `cko target freeze` come as v1 one-process calls (--request).
"""
import json
import os
import random
import signal
import subprocess
import sys
import time


def valid_result(request, latency):
    n = request["samples"]
    primary = request["objective"]["primary"]

    def subject(role):
        return {
            "role": role,
            "correctness": {"status": "passed", "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {
                "primary": {"name": primary["name"], "unit": primary["unit"],
                            "samples": [latency[role] * (1 + 0.001 * i) for i in range(n)]},
                "constraints": [{"name": c["name"], "unit": c["unit"], "samples": [1.0] * n}
                                for c in request["objective"]["constraints"]],
            },
        }
    return {"format_version": "cko/driver-result-v1", "subjects": [subject(s["role"]) for s in request["subjects"]],
            "environment": {"pid": os.getpid()}, "artifacts": []}


def answer(request_path, pid_note):
    request = json.load(open(request_path))
    # The candidate subject is twice as fast as the reference when its folder holds FAST.
    latency = {}
    jitter = random.Random(request["seed"] * 2 + len(request["order"]))
    for s in request["subjects"]:
        fast = os.path.exists(os.path.join(s["path"], "FAST"))
        latency[s["role"]] = (50.0 if fast else 100.0) * (1 + 0.01 * jitter.random())
        sys.stderr.write(f"cko: subject {s['role']} case {request['case']['id']}\n")
    sys.stderr.flush()
    with open(request["result_path"], "w") as f:
        json.dump(valid_result(request, latency), f)
    return request


def note(pid):
    path = os.environ.get("SESSION_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid}\n")


def main():
    behaviour = sys.argv[1]
    if "--request" in sys.argv:  # v1: one request, one process
        answer(sys.argv[sys.argv.index("--request") + 1], False)
        return 0
    note(os.getpid())
    child = subprocess.Popen(["sleep", "300"])  # a helper of the session: must die with it
    note(child.pid)
    served = 0
    with open(os.environ["CKO_SESSION_REQUESTS"]) as requests, open(os.environ["CKO_SESSION_NOTICES"], "w") as notices:
        if behaviour == "never_ready":
            time.sleep(3600)
        if behaviour == "exit_before_ready":
            sys.stderr.write("session_driver: cannot start (planted)\n")
            return 3
        if behaviour.startswith("slow_start_"):  # a long import: before the ready notice
            time.sleep(float(behaviour[len("slow_start_"):]))
        notices.write(json.dumps({"ready": True} if behaviour != "bad_ready" else {"call": 1, "status": "done"}) + "\n")
        notices.flush()
        while True:
            line = requests.readline()
            message = json.loads(line)
            if message.get("exit"):
                child.kill()
                return 0
            served += 1
            print(f"session {os.getpid()} request {served}", flush=True)  # stdout: the call's log
            if served == 3 and behaviour == "hang_on_3":
                time.sleep(3600)
            if served == 3 and behaviour == "crash_on_3":
                sys.stderr.write("cko: subject candidate case small\n")
                sys.stderr.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            if served == 3 and behaviour == "exit_early_on_3":
                os._exit(0)
            answer(message["request"], True)
            notices.write(json.dumps({"call": message["call"], "status": "done"}) + "\n")
            if behaviour == "double_notice":
                notices.write(json.dumps({"call": message["call"], "status": "done"}) + "\n")
            notices.flush()


if __name__ == "__main__":
    sys.exit(main())
