#!/usr/bin/env python3
"""A hostile driver for tests/hostile: `hostile_driver.py BEHAVIOUR --request FILE` attacks cko one way each."""
import json
import os
import sys
import time


def valid_result(request):
    n = request["samples"]
    primary = request["objective"]["primary"]

    def subject(role):
        return {
            "role": role,
            "correctness": {"status": "passed", "metrics": {m: 0.0 for m in request["correctness"]["metrics"]}},
            "measurements": {
                "primary": {"name": primary["name"], "unit": primary["unit"], "samples": [1.5] * n},
                "constraints": [{"name": c["name"], "unit": c["unit"], "samples": [1.0] * n}
                                for c in request["objective"]["constraints"]],
            },
        }
    return {"format_version": "cko/driver-result-v1", "subjects": [subject(s["role"]) for s in request["subjects"]],
            "environment": {"pid": os.getpid()}, "artifacts": []}


def note_pid(pid):
    """Tell the test which processes exist, so it can check in /proc that none survives."""
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid}\n")


def main():
    behaviour = sys.argv[1]
    request = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
    out_dir = request["output_dir"]
    result_path = request["result_path"]
    victim = os.environ.get("HOSTILE_VICTIM", "")  # a path outside the store the driver aims at
    note_pid(os.getpid())

    def write_result():
        with open(result_path, "w") as f:
            json.dump(valid_result(request), f)

    if behaviour == "ok":
        write_result()
    elif behaviour == "bad_utf8_stderr":
        # 1999 ASCII bytes then a 3-byte character: the 2000-byte tail cuts it; then raw invalid bytes.
        sys.stderr.buffer.write(b"x" * 1999 + "\u20ac".encode() + b"y" * 1998 + b" \xff\xfe bad bytes\n")
        sys.exit(1)
    elif behaviour == "bad_utf8_name":
        write_result()
        open(os.path.join(os.fsencode(out_dir), b"scratch-\xff.bin"), "wb").write(b"x")
    elif behaviour == "symlink_out_dir":
        # Replace the output directory with a link to the victim's folder and "write" there.
        import shutil
        shutil.rmtree(out_dir)
        os.symlink(os.path.dirname(victim), out_dir)
    elif behaviour == "symlink_result":
        os.symlink(victim, result_path)
    elif behaviour == "symlink_extra":
        write_result()
        os.symlink(victim, os.path.join(out_dir, "evil.txt"))
        os.symlink(os.path.dirname(victim), os.path.join(out_dir, "evil-dir"))
    elif behaviour == "hardlink_victim":
        write_result()
        try:
            os.link(victim, os.path.join(out_dir, "hard.txt"))
        except OSError:
            open(os.path.join(out_dir, "hard.txt"), "w").write("x")
    elif behaviour == "swap_roles":
        # Loads and "measures" both subjects correctly, each entry built from the subject it timed
        # (its digest included, as the SDKs do), then reports them under each other's role.
        doc = valid_result(request)
        if all("digest" in s for s in request["subjects"]):  # a cko that names them reads v2
            doc["format_version"] = "cko/driver-result-v2"
            for entry, subject in zip(doc["subjects"], request["subjects"]):
                entry["loaded_digest"] = subject["digest"]
        roles = [e["role"] for e in doc["subjects"]]
        for entry, role in zip(doc["subjects"], reversed(roles)):
            entry["role"] = role
        with open(result_path, "w") as f:
            json.dump(doc, f)
    elif behaviour == "swap_roles_v1":
        # The same swap in a cko/driver-result-v1 result, which names no loaded digest: v1 is still
        # read (PROTOCOL.md), so cko cannot tell; it must say the roles went unchecked.
        doc = valid_result(request)
        roles = [e["role"] for e in doc["subjects"]]
        for entry, role in zip(doc["subjects"], reversed(roles)):
            entry["role"] = role
        with open(result_path, "w") as f:
            json.dump(doc, f)
    elif behaviour == "symlink_artifact":
        # A link declared as an artifact: it would be kept as evidence pointing outside the store.
        os.symlink(victim, os.path.join(out_dir, "evidence.txt"))
        doc = valid_result(request)
        doc["artifacts"] = ["evidence.txt"]
        with open(result_path, "w") as f:
            json.dump(doc, f)
    elif behaviour == "hardlink_artifact":
        # A second name of a file elsewhere, declared as an artifact.
        other = os.path.join(os.path.dirname(os.path.dirname(out_dir)), "stdout.txt")
        try:
            os.link(victim, os.path.join(out_dir, "evidence.txt"))
        except OSError:
            os.link(other, os.path.join(out_dir, "evidence.txt"))
        doc = valid_result(request)
        doc["artifacts"] = ["evidence.txt"]
        with open(result_path, "w") as f:
            json.dump(doc, f)
    elif behaviour in ("plant_in_call_dir", "plant_in_root"):
        # A valid result, plus a file elsewhere in the store: next to its output dir, or at the root.
        write_result()
        call_dir = os.path.dirname(out_dir)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(call_dir))))
        where = call_dir if behaviour == "plant_in_call_dir" else root
        with open(os.path.join(where, "planted.json"), "w") as f:
            f.write('{"planted": true}')
    elif behaviour == "special_file":
        write_result()
        os.mkfifo(os.path.join(out_dir, "fifo"))
    elif behaviour == "setsid_daemon":
        import subprocess
        p = subprocess.Popen(["setsid", "sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        note_pid(p.pid)
        time.sleep(0.2)
        write_result()
    elif behaviour == "double_fork_daemon":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                note_pid(os.getpid())
                time.sleep(300)
            os._exit(0)
        time.sleep(0.3)
        write_result()
    elif behaviour == "clean_env_double_fork_daemon":
        # Leaves the session, forks twice and clears its environment (no containment marker): only
        # cko being the child subreaper finds it once the intermediate process is gone.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                note_pid(os.getpid())
                os.execve("/bin/sleep", ["sleep", "300"], {})
            os._exit(0)
        time.sleep(0.3)
        write_result()
    elif behaviour in ("hang", "ignore_term"):
        import signal
        import subprocess
        child = subprocess.Popen(["sleep", "300"])
        note_pid(child.pid)
        if behaviour == "ignore_term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(300)
    elif behaviour == "stop_self":
        import signal
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(300)
    elif behaviour == "nul_in_result":
        with open(result_path, "wb") as f:
            f.write(b'{"format_version": "cko/driver-result-v1", "subjects": [\x00]}')
    elif behaviour == "deep_json":
        with open(result_path, "w") as f:
            f.write("[" * 100000 + "]" * 100000)
    elif behaviour == "duplicate_keys":
        r = json.dumps(valid_result(request))
        with open(result_path, "w") as f:
            f.write(r[:-1] + ', "subjects": []}')
    elif behaviour == "huge_stderr_then_fail":
        chunk = b"\xff" * 65536
        for _ in range(200):  # 13 MB of invalid bytes, beyond the capture cap
            sys.stderr.buffer.write(chunk)
        sys.exit(2)
    elif behaviour == "write_into_store":
        # Try to edit the store around it: its own (read-only, ledgered) request.
        write_result()
        call_dir = os.path.dirname(out_dir)
        for target in (os.path.join(call_dir, "request.json"),):
            try:
                with open(target, "a") as f:
                    f.write("tampered")
            except OSError:
                pass
    elif behaviour == "kill_parent":
        # Signal the cko process that runs it: it must still end with a complete record.
        import signal
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(300)
    elif behaviour == "close_stdout_and_linger":
        os.close(1)
        os.close(2)
        write_result()
    else:
        print(f"unknown behaviour {behaviour}", file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()
