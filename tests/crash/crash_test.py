#!/usr/bin/env python3
"""The crash harness: whole cko operations killed at >= 1000 instants (fault points in the write path, and
random SIGKILL timers); after each: fsck clean, every invocation complete or `lost`, the champion old or new,
no process left, the store still usable; after each freeze, a second freeze reclaims (and says so) what the
first left, and nothing stays behind. With --enospc: the same operations failing with ENOSPC at every
durable write instead (the full-disk test), each ending in io_error with nothing damaged; one cut short while
it copied an invocation's workspace finishes that invocation `failed`, never `lost`.

Usage: CKO=build/cko python3 tests/crash/crash_test.py [--instants N] [--enospc] [--workers K]
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CKO = os.environ.get("CKO") or sys.exit("set CKO to the cko binary")
TERMINAL = {"succeeded", "failed", "cancelled", "timed_out", "lost"}

SPEC = """[target]
name = "saxpy-crash"
claim_layer = "kernel"
original = "original"
change_scope = ["original/speed.txt"]
[cases]
dir = "cases"
ids = ["small"]
[driver]
argv = {driver}
capabilities = ["single_subject", "paired_in_process"]
env_allow = ["PATH", "TMPDIR"]
[objective]
primary = {{ name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }}
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 8
samples_per_call = 2
[limits]
command_timeout_s = 30
operation_timeout_s = 300
"""


class Failure(Exception):
    pass


def cko(*args, env=None, timeout=120, check=None):
    full_env = dict(os.environ)
    for k in ("CKO_FAULT_AT", "CKO_ENOSPC_AT", "CKO_FAULT_COUNT"):
        full_env.pop(k, None)
    full_env.update(env or {})
    p = subprocess.run([CKO, *args], env=full_env, capture_output=True, timeout=timeout)
    if check is not None and p.returncode not in check:
        raise Failure(f"cko {' '.join(args)}: rc {p.returncode}, want {check}: {p.stderr.decode(errors='replace')[-800:]}")
    return p


def copy_store(src, dst):
    subprocess.run(["cp", "-a", src, dst], check=True)


def remove(path):
    subprocess.run(["chmod", "-R", "u+w", path], capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


class World:
    """A Target folder and pristine stores at each stage of the loop."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.spec_dir = os.path.join(tmp, "target")
        self.candidate = os.path.join(tmp, "candidate")
        os.makedirs(os.path.join(self.spec_dir, "original"))
        os.makedirs(os.path.join(self.spec_dir, "cases"))
        os.makedirs(self.candidate)
        open(os.path.join(self.spec_dir, "original", "speed.txt"), "w").write("2.0\n")
        open(os.path.join(self.candidate, "speed.txt"), "w").write("1.0\n")
        open(os.path.join(self.spec_dir, "cases", "small.json"), "w").write('{"n": 4}\n')
        with open(os.path.join(self.spec_dir, "cko.toml"), "w") as f:
            # The compiled driver when ctest built it (an interpreter's start-up would dominate each call).
            quick = os.environ.get("CKO_QUICK_DRIVER")
            argv = [quick] if quick else ["python3", os.path.join(HERE, "quick_driver.py")]
            f.write(SPEC.format(driver=json.dumps(argv)))
        self.spec = os.path.join(self.spec_dir, "cko.toml")
        self.stage = {}
        s = self.new_stage("frozen")
        cko("target", "freeze", "--spec", self.spec, "--root", s, check=[0])
        s = self.next_stage("frozen", "baselined")
        cko("baseline", "--root", s, "--calls-per-case", "1", "--aa-pairs", "6", check=[0])
        s = self.next_stage("baselined", "experiment")
        out = cko("experiment", "new", "--root", s, "--candidate", self.candidate,
                  "--hypothesis", "rows are contiguous", "--mechanism", "loop-order", "--failure-closes", "mechanism",
                  "--no-falsifier-reason", "known", "--json", check=[0])
        self.exp = json.loads(out.stdout)["id"]
        s = self.next_stage("experiment", "confirmed")
        out = cko("confirm", self.exp, "--root", s, "--json", check=[0, 1])
        self.confirm = json.loads(out.stdout)["id"] if out.returncode == 0 else None
        if self.confirm is None:
            raise Failure("the example's confirm was not `improved`: rerun (noise)")
        s = self.next_stage("confirmed", "selected")
        cko("champion", "select", "--root", s, "--experiment", self.exp, "--confirm", self.confirm, check=[0])

    def new_stage(self, name):
        self.stage[name] = os.path.join(self.tmp, "stage-" + name)
        return self.stage[name]

    def next_stage(self, prev, name):
        copy_store(self.stage[prev], self.new_stage(name))
        return self.stage[name]

    def operations(self):
        """(name, stage to start from or None, argv with ROOT for the store, rc of a normal finish)."""
        return [
            ("freeze", None, ["target", "freeze", "--spec", self.spec, "--root", "ROOT"]),
            ("baseline", "frozen", ["baseline", "--root", "ROOT", "--calls-per-case", "1", "--aa-pairs", "6"]),
            ("experiment", "baselined", ["experiment", "new", "--root", "ROOT", "--candidate",
                                         self.candidate, "--hypothesis", "h", "--mechanism", "m",
                                         "--failure-closes", "mechanism", "--no-falsifier-reason", "r"]),
            ("screen", "experiment", ["screen", self.exp, "--root", "ROOT"]),
            ("confirm", "experiment", ["confirm", self.exp, "--root", "ROOT"]),
            ("select", "confirmed", ["champion", "select", "--root", "ROOT", "--experiment", self.exp,
                                     "--confirm", self.confirm]),
            ("restore", "selected", ["champion", "restore", "--root", "ROOT", "--reason", "crash test"]),
        ]


def champion_digest(root):
    p = cko("champion", "show", "--root", root, "--json", check=[0])
    return json.loads(p.stdout)["digest"]


def leftovers(marker):
    """Live processes whose command line names our scratch directory (drivers get their request path)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state not in ("Z", "X"):
            found.append((pid, cmd.replace(b"\0", b" ").decode(errors="replace")))
    return found


def check_after(world, root, op, before_digest, after_digests, marker):
    """What must hold after any crash. Returns the champion digest found."""
    if not os.path.exists(root):
        if op != "freeze":
            raise Failure(f"{op}: the store vanished")
        return None  # a freeze killed before its rename: nothing at ROOT, as promised
    deadline = time.time() + 3
    while leftovers(marker) and time.time() < deadline:
        time.sleep(0.05)
    left = leftovers(marker)
    if left:
        raise Failure(f"{op}: processes survived the kill: {left}")
    # The explicit step that declares dead owners' invocations lost.
    inv_dir = os.path.join(root, "invocations")
    for inv in sorted(os.listdir(inv_dir)):
        if not inv.startswith("inv-"):
            continue
        p = cko("status", inv, "--root", root, "--json", check=[0, 1, 3, 4])
        state = json.loads(p.stdout)["state"]
        if state not in TERMINAL:
            raise Failure(f"{op}: invocation {inv} is {state} after its owner died")
    p = cko("fsck", "--root", root, "--json", check=[0, 1])
    report = json.loads(p.stdout.decode("utf-8"))
    if report["damaged"]:
        raise Failure(f"{op}: fsck reports damage: {[f for f in report['findings'] if f['damage']]}")
    digest = champion_digest(root)
    if digest not in (before_digest, *after_digests):
        raise Failure(f"{op}: champion is {digest}, neither old {before_digest} nor new {after_digests}")
    cko("ls", "--root", root, "--json", check=[0])
    return digest


def invocation_ids(root):
    inv_dir = os.path.join(root, "invocations")
    return {i for i in os.listdir(inv_dir) if i.startswith("inv-")} if os.path.isdir(inv_dir) else set()


def check_copy_cut_short(root, op, n, before_invocations):
    """A full disk while an invocation's workspace was copied: the partial copy is removed, which gives its
    space back, so the operation records its invocation `failed` with the io_error (it was `lost`)."""
    new = sorted(invocation_ids(root) - before_invocations)
    if not new:
        raise Failure(f"{op}: ENOSPC at point {n} cut a workspace copy short, but no invocation records it")
    for inv in new:
        p = cko("status", inv, "--root", root, "--json", check=[0, 1, 3, 4])
        status = json.loads(p.stdout)
        code = (status.get("result") or {}).get("error", {}).get("code")
        if status["state"] != "failed" or code != "io_error":
            raise Failure(f"{op}: ENOSPC at point {n} cut a workspace copy short; invocation {inv} is "
                          f"{status['state']} ({code}), want failed (io_error)")


def freeze_leftovers(workdir, tmpdir):
    """Whatever a freeze of ROOT=workdir/art left beside the root (hidden staging trees) or in its TMPDIR
    (a failed freeze's kept logs, an identity probe's scratch folder)."""
    beside = [n for n in os.listdir(workdir) if n not in ("art", "tmp")]
    kept = os.listdir(tmpdir) if os.path.isdir(tmpdir) else []
    return sorted(beside + kept)


def check_freeze_leftovers(root, argv, workdir, tmpdir, how, n):
    """After a killed (or full-disk) freeze: a freeze that got as far as its rename leaves nothing behind;
    one that did not leaves what the next freeze of the same root reclaims, naming each, and then nothing."""
    left = freeze_leftovers(workdir, tmpdir)
    if os.path.exists(root):
        if left:
            raise Failure(f"freeze {how}@{n}: the root is frozen, yet the freeze left {left}")
        return
    p = cko(*[a if a != "ROOT" else root for a in argv], env={"TMPDIR": tmpdir}, check=[0])
    out = p.stdout.decode(errors="replace")
    if left and "reclaimed what earlier freezes left (their process is gone):" not in out:
        raise Failure(f"freeze {how}@{n}: the next freeze did not report reclaiming {left}: {out[-600:]}")
    unnamed = [x for x in left if x not in out]
    if unnamed:
        raise Failure(f"freeze {how}@{n}: the next freeze reclaimed without naming {unnamed}: {out[-600:]}")
    still = freeze_leftovers(workdir, tmpdir)
    if still:
        raise Failure(f"freeze {how}@{n}: after the next freeze, still left: {still} (first left {left})")


def run_instant(world, op, stage, argv, how, n, workdir, expected):
    """Returns "copy" when an ENOSPC cut a workspace copy short, else None."""
    root = os.path.join(workdir, "art")
    tmpdir = os.path.join(workdir, "tmp")  # the operation's TMPDIR: what a failed freeze keeps there
    os.makedirs(tmpdir)
    marker = workdir
    if stage is not None:
        copy_store(world.stage[stage], root)
    before_invocations = invocation_ids(root)
    args = [a if a != "ROOT" else root for a in argv]
    before = champion_digest(root) if stage is not None else None
    env = {"TMPDIR": tmpdir}
    if how == "fault":
        env["CKO_FAULT_AT"] = str(n)
    elif how == "enospc":
        env["CKO_ENOSPC_AT"] = str(n)
    full_env = dict(os.environ)
    full_env.update(env)
    proc = subprocess.Popen([CKO, *args], env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if how == "timer":
        try:
            proc.wait(timeout=n / 1000.0)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    rc = proc.returncode
    text = err.decode(errors="replace")
    copy_cut = how == "enospc" and rc != 0 and "cannot copy" in text and "of snapshot" in text
    if how == "enospc":
        if rc == 0 and "ENOSPC" not in text:
            pass  # the op finished before point n (the number of points varies a little between runs)
        elif "error[internal]" in text or rc not in (0, 1, 3):
            raise Failure(f"{op}: ENOSPC at point {n} gave rc {rc}: {text[-600:]}")
        elif rc == 3 and ("No space left on device" not in text or "error[io_error]" not in text):
            raise Failure(f"{op}: ENOSPC at point {n} did not surface as io_error: {text[-600:]}")
    after = expected.get(op, ())
    digest = check_after(world, root, op, before, after, marker)
    if copy_cut and digest is not None:
        check_copy_cut_short(root, op, n, before_invocations)
    if op == "freeze":
        check_freeze_leftovers(root, argv, workdir, tmpdir, how, n)
    # The loop continues: the next operation on this store works.
    if digest is not None and op in ("select", "restore", "confirm", "screen"):
        cko("champion", "show", "--root", root, check=[0])
    remove(workdir)
    return "copy" if copy_cut else None


def count_fault_points(world, tmp):
    """How many fault points each operation has: one undisturbed run each, counted (CKO_FAULT_COUNT).
    tests/docs/doc_facts_test.py calls it too, to check the counts docs/reliability.md states."""
    points = {}
    for name, stage, argv in world.operations():
        work = tempfile.mkdtemp(prefix=f"count-{name}-", dir=tmp)
        root = os.path.join(work, "art")
        if stage:
            copy_store(world.stage[stage], root)
        count_file = os.path.join(work, "count")
        cko(*[x if x != "ROOT" else root for x in argv], env={"CKO_FAULT_COUNT": count_file}, check=[0, 1])
        points[name] = int(open(count_file).read().split()[-1])
        remove(work)
    return points


def fault_stride(points, instants):
    """Every stride-th fault point of each operation is killed: every point when they number <= instants."""
    return max(1, sum(points.values()) // instants)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instants", type=int, default=1000, help="fault-point kills to make, at least")
    ap.add_argument("--timers", type=int, default=60, help="random-timer kills on top")
    ap.add_argument("--enospc", action="store_true", help="the full-disk test instead of kills")
    ap.add_argument("--workers", type=int, default=max(2, min(4, os.cpu_count() or 2)))
    a = ap.parse_args()
    started = time.time()
    tmp = tempfile.mkdtemp(prefix="cko-crash-")
    try:
        world = World(tmp)
        ops = world.operations()
        # The champion digests an operation may leave: the stage's and, for select/restore, the other.
        sel_digest = champion_digest(world.stage["selected"])
        orig_digest = champion_digest(world.stage["confirmed"])
        expected = {"select": (sel_digest,), "restore": (orig_digest,), "freeze": (orig_digest,)}
        points = count_fault_points(world, tmp)
        total = sum(points.values())
        stride = fault_stride(points, a.instants)
        jobs = []
        for name, stage, argv in ops:
            for n in range(1, points[name] + 1, stride):
                jobs.append((name, stage, argv, "enospc" if a.enospc else "fault", n))
        rng = random.Random(11)
        if not a.enospc:
            # A sixth of the timers on any operation (so kills land while drivers run), the rest on the
            # short ones (freeze, experiment, select, restore) with delays inside their run time.
            short = [op for op in ops if op[0] in ("freeze", "experiment", "select", "restore")]
            for i in range(a.timers):
                if i % 6 == 0:
                    name, stage, argv = rng.choice(ops)
                    jobs.append((name, stage, argv, "timer", rng.randint(5, 1500)))
                else:
                    name, stage, argv = rng.choice(short)
                    jobs.append((name, stage, argv, "timer", rng.randint(1, 300)))
        print(f"fault points per operation: {points} (total {total}); running {len(jobs)} instants, "
              f"stride {stride}, {a.workers} workers", flush=True)
        failures = []
        done = 0
        copies_cut = 0

        def one(job):
            name, stage, argv, how, n = job
            work = tempfile.mkdtemp(prefix=f"{name}-{how}-{n}-", dir=tmp)
            return run_instant(world, name, stage, argv, how, n, work, expected)

        with concurrent.futures.ThreadPoolExecutor(a.workers) as pool:
            futures = {pool.submit(one, j): j for j in jobs}
            for f in concurrent.futures.as_completed(futures):
                done += 1
                try:
                    copies_cut += f.result() == "copy"
                except Exception as e:  # noqa: BLE001 - every failure is reported with its job
                    failures.append(f"{futures[f][0]} {futures[f][3]}@{futures[f][4]}: {e}")
        if a.enospc and copies_cut == 0:
            failures.append("no ENOSPC point cut a workspace copy short and had it recorded: the sweep does not "
                            "reach the copy, or the operation reported another error (its invocation lost?)")
        kind = "ENOSPC points" if a.enospc else "kills"
        cut = f", {copies_cut} cut a workspace copy short" if a.enospc else ""
        print(f"crash: {done} {kind} ({total} fault points){cut}, {len(failures)} failures, "
              f"{time.time() - started:.0f} s", flush=True)
        for f in failures[:20]:
            print("  FAIL:", f, file=sys.stderr)
        return 1 if failures else 0
    finally:
        remove(tmp)


if __name__ == "__main__":
    sys.exit(main())
