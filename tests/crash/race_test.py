#!/usr/bin/env python3
"""Races (issue 11 items 5, 10): two `cko confirm EXP` started together reach one verdict between them; two
`champion select` / `restore` started together leave exactly one selection record, and fsck stays clean.

Usage: CKO=build/cko python3 tests/crash/race_test.py [--rounds N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_test as c  # noqa: E402  (the World of the crash harness)


def together(argvs):
    procs = [subprocess.Popen([c.CKO, *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE) for a in argvs]
    return [(p.wait(timeout=300), p.stderr.read().decode(errors="replace")) for p in procs]


def selections(root):
    return sorted(f for f in os.listdir(os.path.join(root, "champion", "selections")) if f.endswith(".json"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cko-race-")
    failures = []
    try:
        w = c.World(tmp)
        for r in range(a.rounds):
            root = os.path.join(tmp, f"confirm-{r}")
            c.copy_store(w.stage["experiment"], root)
            got = together([["confirm", w.exp, "--root", root]] * 2)
            verdicts = [rc for rc, _ in got if rc in (0, 1)]
            refused = [err for rc, err in got if rc == 2 and "already_confirmed" in err]
            if len(verdicts) != 1 or len(refused) != 1:
                failures.append(f"confirm round {r}: {got}")
            for kind, stage, argv in (
                    ("select", "confirmed", ["champion", "select", "--experiment", w.exp, "--confirm", w.confirm]),
                    ("restore", "selected", ["champion", "restore"])):
                root = os.path.join(tmp, f"{kind}-{r}")
                c.copy_store(w.stage[stage], root)
                before = len(selections(root))
                # Different reasons make different records: a loser's would show.
                got = together([argv + ["--root", root] + (["--reason", f"race {k}"] if kind == "restore" else [])
                                for k in range(2)])
                wins = [rc for rc, _ in got if rc == 0]
                after = len(selections(root))
                report = json.loads(c.cko("fsck", "--root", root, "--json").stdout)
                if len(wins) != 1 or after != before + 1 or report["damaged"]:
                    failures.append(f"{kind} round {r}: rcs {[g[0] for g in got]}, selections {before}->{after}, "
                                    f"damaged {report['damaged']}: {[g[1][-300:] for g in got]}")
        print(f"races: {a.rounds} rounds x 3 (confirm, select, restore), {len(failures)} failures")
        for f in failures:
            print("  FAIL:", f, file=sys.stderr)
        return 1 if failures else 0
    finally:
        c.remove(tmp)


if __name__ == "__main__":
    sys.exit(main())
