#!/usr/bin/env python3
"""Races (issue 11 items 5, 10; issue 22): two `cko confirm EXP` started together reach one verdict between them;
two `champion select` (the first champion, and one over an existing champion) or `restore` started together leave
exactly one selection record, and fsck stays clean.

Started together, the two rarely overlap where it matters: between reading champion/current.json and swapping it.
So a second set of rounds widens that window (CKO_FAULT_PAUSE=champion-read:MS, src/cko/util/fault.hpp) and starts
the second process while the first waits in it: both have read the same champion before either swaps, and the one
that swaps second must be refused with cas_conflict. Before the fix of issue 22 (the pointer was parsed in one read
and hashed in another) both exited 0 there, each writing a selection record.

Usage: CKO=build/cko python3 tests/crash/race_test.py [--rounds N] [--window-rounds N] [--window-ms MS]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_test as c  # noqa: E402  (the World of the crash harness)


def together(argvs, env=None, stagger_s=0.0):
    procs = []
    for k, a in enumerate(argvs):
        if k and stagger_s:
            time.sleep(stagger_s)
        procs.append(subprocess.Popen([c.CKO, *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env={**os.environ, **(env or {})}))
    return [(p.wait(timeout=300), p.stderr.read().decode(errors="replace")) for p in procs]


def selections(root):
    return sorted(f for f in os.listdir(os.path.join(root, "champion", "selections")) if f.endswith(".json"))


def over_champion_stage(w, tmp):
    """A store whose champion is w.exp, with a second experiment (a faster candidate, based on that champion)
    confirmed `improved`: selecting it replaces an existing pointer. Returns (stage, experiment, confirm)."""
    faster = os.path.join(tmp, "candidate-faster")
    os.makedirs(faster)
    open(os.path.join(faster, "speed.txt"), "w").write("0.5\n")
    s = w.next_stage("selected", "champion-confirmed")
    out = c.cko("experiment", "new", "--root", s, "--base", "champion", "--candidate", faster,
                "--hypothesis", "half the work", "--mechanism", "work", "--failure-closes", "mechanism",
                "--no-falsifier-reason", "known", "--json", check=[0])
    exp = json.loads(out.stdout)["id"]
    out = c.cko("confirm", exp, "--root", s, "--json", check=[0, 1])
    if out.returncode != 0:
        raise c.Failure("the second experiment's confirm was not `improved`: rerun (noise)")
    return s, exp, json.loads(out.stdout)["id"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--window-rounds", type=int, default=2, help="rounds with the read-to-swap window widened")
    ap.add_argument("--window-ms", type=int, default=1500, help="how long each process pauses in that window")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cko-race-")
    failures = []
    try:
        w = c.World(tmp)
        over, exp2, confirm2 = over_champion_stage(w, tmp)
        contests = (
            ("select", w.stage["confirmed"], ["champion", "select", "--experiment", w.exp, "--confirm", w.confirm]),
            ("select-over-champion", over, ["champion", "select", "--experiment", exp2, "--confirm", confirm2]),
            ("restore", w.stage["selected"], ["champion", "restore"]),
        )

        def contest(name, stage, argv, r, env=None, stagger_s=0.0, loser_code=None):
            root = os.path.join(tmp, f"{name}-{r}")
            c.copy_store(stage, root)
            before = len(selections(root))
            # Different reasons make different records: a loser's would show.
            got = together([argv + ["--root", root] + (["--reason", f"race {k}"] if name == "restore" else [])
                            for k in range(2)], env=env, stagger_s=stagger_s)
            wins = [rc for rc, _ in got if rc == 0]
            # The loser refuses in so many words (exit 2, the code named), not by some other failure.
            refused = [err for rc, err in got if rc == 2 and (loser_code is None or loser_code in err)]
            after = len(selections(root))
            report = json.loads(c.cko("fsck", "--root", root, "--json").stdout)
            if len(wins) != 1 or len(refused) != 1 or after != before + 1 or report["damaged"]:
                failures.append(f"{name} round {r}{' (window widened)' if env else ''}: rcs {[g[0] for g in got]}, "
                                f"selections {before}->{after}, damaged {report['damaged']}: "
                                f"{[g[1][-300:] for g in got]}")

        for r in range(a.rounds):
            root = os.path.join(tmp, f"confirm-{r}")
            c.copy_store(w.stage["experiment"], root)
            got = together([["confirm", w.exp, "--root", root]] * 2)
            verdicts = [rc for rc, _ in got if rc in (0, 1)]
            refused = [err for rc, err in got if rc == 2 and "already_confirmed" in err]
            if len(verdicts) != 1 or len(refused) != 1:
                failures.append(f"confirm round {r}: {got}")
            for name, stage, argv in contests:
                contest(name, stage, argv, r)
        # Both processes read the same champion before either swaps: the second to swap finds the pointer
        # changed under it (the first champion's select reads no pointer, so it has no window to widen).
        pause = {"CKO_FAULT_PAUSE": f"champion-read:{a.window_ms}"}
        for r in range(a.window_rounds):
            for name, stage, argv in contests[1:]:
                contest(name, stage, argv, f"window-{r}", env=pause, stagger_s=a.window_ms / 3000,
                        loser_code="cas_conflict")
        print(f"races: {a.rounds} rounds x 4 (confirm, select, select over a champion, restore) and "
              f"{a.window_rounds} x 2 with a {a.window_ms} ms window, {len(failures)} failures")
        for f in failures:
            print("  FAIL:", f, file=sys.stderr)
        return 1 if failures else 0
    finally:
        c.remove(tmp)


if __name__ == "__main__":
    sys.exit(main())
