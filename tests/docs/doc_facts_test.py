#!/usr/bin/env python3
"""The counts and names the docs state about cko itself, checked against the binary and the test harnesses.

Each check anchors on a sentence of a doc (a regex), reads the value the doc states, asks the truth of the
binary (`cko mcp` tools/list, `cko profile ncu --json`, `cko doctor --json`, ...) or of the harness that
measures it (tests/crash, tests/hostile, tests/CMakeLists.txt), and on a difference fails with the doc, the
line and the true value. A sentence that is gone fails too: change the check with the doc.

Usage: CKO=build/cko [CKO_QUICK_DRIVER=build/tests/crash_quick_driver] python3 tests/docs/doc_facts_test.py
(from the repository root; ctest `doc_facts` runs it so).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CKO = os.path.abspath(os.environ.get("CKO") or sys.exit("set CKO to the cko binary"))
os.environ["CKO"] = CKO  # the crash harness reads it as it is imported
sys.path.insert(0, os.path.join(REPO, "tests", "crash"))
import crash_test  # noqa: E402  (the crash harness: its World and its fault-point count)

failures = []
_world = []


def crash_world():
    """The crash harness's Target and stores at each stage of the loop, made once (a few seconds)."""
    if not _world:
        tmp = tempfile.mkdtemp(prefix="cko-doc-facts-")
        _world.append((crash_test.World(tmp), tmp))
    return _world[0]


def read(doc):
    with open(os.path.join(REPO, doc), encoding="utf-8") as f:
        return f.read()


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def anchor(doc, pattern, flags=re.S):
    """The first match of pattern in doc, or None after recording that the sentence is gone."""
    text = read(doc)
    m = re.search(pattern, text, flags)
    if m is None:
        failures.append(f"{doc}: no sentence matches /{pattern}/ any more; update tests/docs/doc_facts_test.py "
                        "with the doc")
    return m


def expect(doc, m, group, stated, true, what):
    if stated != true:
        line = line_of(read(doc), m.start(group))
        failures.append(f"{doc}:{line}: {what}: the doc says {stated}, the true value is {true}")


def cko(*args, check=(0,), env=None):
    p = subprocess.run([CKO, *args], capture_output=True, cwd=REPO, env={**os.environ, **(env or {})})
    if p.returncode not in check:
        sys.exit(f"cko {' '.join(args)}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-600:]}")
    return p


def mcp_tools(*flags):
    """tools/list over stdio, as an MCP client sees it."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "doc_facts_test", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    out = subprocess.run([CKO, "mcp", *flags], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                         capture_output=True, check=True, timeout=60).stdout
    for raw in out.splitlines():
        message = json.loads(raw)
        if message.get("id") == 2:
            return message["result"]["tools"]
    sys.exit("cko mcp answered no tools/list")


TOOLS = mcp_tools()
# The verb table as the binary serves it: a tool's name is its verb's words joined by "_".
VERBS = {tuple(t["name"].split("_")) for t in TOOLS}
GROUPS = {v[:i] for v in VERBS for i in range(1, len(v))}


# --- docs/mcp.md ----------------------------------------------------------------------------------

def check_mcp():
    m = anchor("docs/mcp.md", r"tools/list of (\d+) tools")
    if m:
        expect("docs/mcp.md", m, 1, int(m.group(1)), len(TOOLS), "tools in tools/list")
    m = anchor("docs/mcp.md", r"Long verbs \(([^)]*)\)\s+also take `detach: true`")
    if m:
        stated = sorted(re.findall(r"`([^`]+)`", m.group(1)))
        true = sorted(t["name"] for t in TOOLS if "detach" in t["inputSchema"].get("properties", {}))
        expect("docs/mcp.md", m, 1, stated, true, "tools taking detach")


# --- verbs named in the docs ----------------------------------------------------------------------

def resolve(words, prefixes, groups=False):
    """The longest verb (or, with groups, group) that words start with after one of prefixes, or None."""
    names = VERBS | GROUPS if groups else VERBS
    for prefix in prefixes:
        best = None
        for n in range(1, len(words) + 1):
            if prefix + tuple(words[:n]) in names:
                best = prefix + tuple(words[:n])
        if best:
            return best
    return None


def verbs_of_segment(words, prefixes, groups):
    """The verbs of one command: `profile collect ncu|nsys|torch --root R`, `screen/confirm/audit`."""
    for i, word in enumerate(words):
        alternatives = re.split(r"[|/]", word)
        if len(alternatives) > 1:
            verbs = [resolve(words[:i] + [a], prefixes, groups) for a in alternatives]
            if all(v and v[-1] == a for v, a in zip(verbs, alternatives)):
                return verbs
    verb = resolve(words, prefixes, groups)
    return [verb] if verb else []


def verbs_of_command(command, groups=False):
    """The verbs a shell line names: `cko ls / show ID`, `cko profile ncu A | nsys B`, `collect ncu|nsys`.
    Returns (verbs, segments naming none)."""
    found, unknown = [], []
    prefixes = [()]
    for segment in re.split(r" / | \| ", command[len("cko "):]):
        words = segment.split()
        if not words:
            continue
        verbs = verbs_of_segment(words, prefixes, groups)
        if not verbs:
            unknown.append(segment)
            continue
        found += verbs
        # A later segment names a verb from the root or from a group of this one.
        prefixes = [verbs[0][:i] for i in range(len(verbs[0]) - 1, -1, -1)]
    return found, unknown


def check_readme_tour():
    doc = "README.md"
    text = read(doc)
    m = anchor(doc, r"## A short tour\s*```sh\n(.*?)```")
    if not m:
        return
    named = set()
    for offset, line in zip(re.finditer(r"^.*$", m.group(1), re.M), m.group(1).splitlines()):
        command = line.split("  #")[0].strip()
        if not command.startswith("cko "):
            continue
        lineno = line_of(text, m.start(1) + offset.start())
        if command.startswith("cko mcp"):
            continue  # the server, not a verb of the table
        verbs, unknown = verbs_of_command(command)
        named.update(verbs)
        for segment in unknown:
            failures.append(f"{doc}:{lineno}: the tour's `{segment.strip()}` names no verb of the table "
                            f"(cko help --json)")
    missing = sorted(" ".join(v) for v in VERBS - named)
    if missing:
        m2 = anchor(doc, r"every verb above as an MCP tool")
        if m2:
            failures.append(f"{doc}:{line_of(text, m2.start())}: the tour says every verb above is an MCP tool, "
                            f"but it leaves out {missing} (the verb table has {len(VERBS)} verbs)")


def check_inline_commands():
    """Every `cko VERB ...` code span of the docs names a verb the binary has."""
    for doc in sorted(glob.glob("docs/*.md", root_dir=REPO)) + ["README.md"]:
        text = read(doc)
        for m in re.finditer(r"`(cko [^`\n]+)`", text):
            command = m.group(1)
            if re.match(r"cko (mcp|VERB)\b", command) or re.match(r"cko --(version|help)\b", command):
                continue  # mcp is the server, VERB a placeholder, --version/--help global flags
            _, unknown = verbs_of_command(command, groups=True)
            if unknown:
                failures.append(f"{doc}:{line_of(text, m.start())}: `{command}` names no verb of the table")
        for m in re.finditer(r"the (\w[\w ]*?) verb has not landed", text):
            if tuple(m.group(1).split()) in VERBS:
                failures.append(f"{doc}:{line_of(text, m.start())}: says the {m.group(1)} verb has not landed; "
                                f"the binary has `cko {m.group(1)}`")


# --- exit codes and error codes -------------------------------------------------------------------

def exit_table():
    """ExitClass and CKO_ERROR_CODES of src/cko/util/error.hpp: the code's one exit-code table."""
    header = read("src/cko/util/error.hpp")
    enum = re.search(r"enum class ExitClass : int \{(.*?)\};", header, re.S).group(1)
    classes = {name: int(n) for name, n in re.findall(r"(\w+) = (\d+)", enum)}
    codes = {code: classes[cls] for code, cls in re.findall(r"^\s+X\((\w+), (\w+)\)", header, re.M)}
    return classes, codes


# How README names each exit class (a new class needs its words here and in README).
EXIT_WORDS = {"success": "success", "negative_verdict": "negative verdict", "usage": "usage",
              "environment": "environment", "interrupted": "interrupted", "still_running": "wait --timeout"}


def check_exit_codes():
    classes, codes = exit_table()
    doc = "README.md"
    m = anchor(doc, r"Exit codes: (.*?)\. The same code")
    if m:
        stated = {int(n): words for n, words in re.findall(r"(\d+) ([^,]+)", " ".join(m.group(1).split()))}
        expect(doc, m, 1, sorted(stated), sorted(classes.values()), "exit codes")
        for name, n in classes.items():
            words = EXIT_WORDS.get(name)
            if words is None:
                failures.append(f"src/cko/util/error.hpp: exit class {name} ({n}) is new: name it in README's "
                                "`Exit codes:` and in EXIT_WORDS of tests/docs/doc_facts_test.py")
            elif n in stated and words not in stated[n].replace("`", ""):
                expect(doc, m, 1, f"{n} {stated[n]}", f"{n} {name}", "exit code meaning")
    # `code` (exit N) and `code`, exit N anywhere; every code of an "(exit 2 unless noted)" paragraph.
    for path in sorted(glob.glob("docs/*.md", root_dir=REPO)) + ["README.md"]:
        text = read(path)
        for m in re.finditer(r"`(\w+)`(?: \(|, )exit (\d)", text):
            if m.group(1) in codes:
                expect(path, m, 2, int(m.group(2)), codes[m.group(1)], f"exit status of error {m.group(1)}")
        for m in re.finditer(r"error\[(\w+)\]", text):
            if m.group(1) not in codes and m.group(1) != "code":
                failures.append(f"{path}:{line_of(text, m.start())}: error[{m.group(1)}] is no error code "
                                "(src/cko/util/error.hpp)")
        for m in re.finditer(r"\(exit 2 unless noted\)(.*?)(?:\n\n|\n#)", text, re.S):
            for c in re.finditer(r"`(\w+)`( \([^)]*\))?", m.group(1)):
                noted = c.group(2) and "exit" in c.group(2)
                if c.group(1) in codes and not noted and codes[c.group(1)] != 2:
                    failures.append(f"{path}:{line_of(text, m.start(1) + c.start())}: {c.group(1)} is listed "
                                    f"under 'exit 2 unless noted' without a note; it exits {codes[c.group(1)]}")


# --- docs/reliability.md: the crash harness, the hostile drivers, the races -----------------------

def cmake_args(name):
    """The crash harness's arguments tests/CMakeLists.txt passes outside the sanitizers."""
    branches = re.search(r"if\(CKO_SANITIZE\)(.*?)endif\(\)", read("tests/CMakeLists.txt"), re.S).group(1)
    args = re.search(r"set\(" + name + r" ([^)]*)\)", branches.split("else()")[1]).group(1).split()
    options = {}
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            options[arg] = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else True
    return options


def check_crash_counts():
    doc = "docs/reliability.md"
    world, tmp = crash_world()
    points = crash_test.count_fault_points(world, tmp)
    total = sum(points.values())
    crash = cmake_args("CKO_CRASH_ARGS")
    enospc = cmake_args("CKO_ENOSPC_ARGS")
    instants, timers = int(crash["--instants"]), int(crash["--timers"])
    stride = crash_test.fault_stride(points, instants)
    fault_kills = sum(len(range(1, n + 1, stride)) for n in points.values())
    m = anchor(doc, r"\| (\d+) kills: all (\d+) fault points \(([^)]*)\) \+ (\d+) timers")
    if m:
        expect(doc, m, 1, int(m.group(1)), fault_kills + timers, "kills of ctest crash_harness")
        expect(doc, m, 2, int(m.group(2)), total, "fault points (CKO_FAULT_COUNT of each operation)")
        stated = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(3))}
        expect(doc, m, 3, stated, points, "fault points per operation")
        expect(doc, m, 4, int(m.group(4)), timers, "random SIGKILL timers (tests/CMakeLists.txt)")
    m = anchor(doc, r"plus (\d+) random SIGKILL timers")
    if m:
        expect(doc, m, 1, int(m.group(1)), timers, "random SIGKILL timers (tests/CMakeLists.txt)")
    m = anchor(doc, r"as on a full disk \| all (\d+) points")
    if m:
        all_points = crash_test.fault_stride(points, int(enospc["--instants"])) == 1
        expect(doc, m, 1, int(m.group(1)), total if all_points else "not all", "ENOSPC points of ctest full_disk")


def hostile_catalogue():
    """What tests/hostile/hostile_test.sh runs, read from the script: drivers (the hostile function's
    calls), the spec loop's specs, and the other cases it counts at top level."""
    lines = read("tests/hostile/hostile_test.sh").splitlines()
    drivers, specs, others = [], [], 0
    in_function = in_loop = False
    loop_words = []
    for line in lines:
        if re.match(r"^hostile\(\) \{", line):
            in_function = True
            continue
        if in_function:
            in_function = line != "}"
            continue
        m = re.match(r"^for how in ([\w ]+); do", line)
        if m:
            in_loop, loop_words = True, m.group(1).split()
            continue
        if in_loop:
            if line == "done":
                in_loop = False
            elif "target freeze" in line:
                specs = loop_words
            continue
        m = re.match(r"^\s*(?:\w+=\w+ )?hostile (\w+) ", line)
        if m and m.group(1) not in drivers:
            drivers.append(m.group(1))
        elif re.match(r"^cases=\$\(\(cases \+ 1\)\)", line):
            others += 1
    return drivers, specs, others


NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def number(text):
    return NUMBER_WORDS[text] if text in NUMBER_WORDS else int(text)


def check_hostile_counts():
    doc = "docs/reliability.md"
    drivers, specs, others = hostile_catalogue()
    hostile = [d for d in drivers if d != "ok"]  # `ok` is the well-behaved control
    count = r"(\d+|" + "|".join(NUMBER_WORDS) + ")"
    m = anchor(doc, count + r" hostile drivers")
    if m:
        expect(doc, m, 1, number(m.group(1)), len(hostile), "hostile drivers of hostile_test.sh (`ok` aside)")
    m = anchor(doc, count + r" hostile requests")
    if m:
        expect(doc, m, 1, number(m.group(1)), others, "hostile requests (cases outside drivers and specs)")
    m = anchor(doc, count + r" hostile specs")
    if m:
        expect(doc, m, 1, number(m.group(1)), len(specs), "hostile specs")
    m = anchor(doc, r"\| (\d+) cases, each its own code or state")
    if m:
        expect(doc, m, 1, int(m.group(1)), len(drivers) + others + len(specs), "cases of hostile_test.sh")
    # Every driver the doc cites as `hostile NAME`... is one the suite runs.
    text = read(doc)
    for m in re.finditer(r"hostile ((?:`\w+`(?:,\s*)?)+)", text):
        for name in re.findall(r"`(\w+)`", m.group(1)):
            if name not in drivers:
                failures.append(f"{doc}:{line_of(text, m.start())}: hostile `{name}` is no driver of "
                                "tests/hostile/hostile_test.sh")


def check_race_counts():
    doc = "docs/reliability.md"
    text = read("tests/CMakeLists.txt")
    rounds = int(re.search(r"race_test\.py --rounds (\d+)", text).group(1))
    kinds = int(re.search(r"rounds x (\d+) \(", read("tests/crash/race_test.py")).group(1))
    m = anchor(doc, r"\| (\d+) rounds of two `confirm`")
    if m:
        expect(doc, m, 1, int(m.group(1)), rounds, "rounds of ctest races")
    m = anchor(doc, r"\| (\d+) races, ")
    if m:
        expect(doc, m, 1, int(m.group(1)), rounds * kinds, "races of ctest races")


# --- docs/report.md: the Profiles section ---------------------------------------------------------

def check_report_profiles():
    """On a crash harness store: the Profiles row of docs/report.md against real reports."""
    doc = "docs/report.md"
    world, _ = crash_world()
    m = anchor(doc, r"\| Profiles \| ([^\n]*) \|")
    if not m:
        return
    row = m.group(1)
    root = world.stage["selected"]
    empty = cko("report", "--root", root, "--format", "md").stdout.decode()
    stated_empty = re.search(r"`(profiles: [^`]*)`", row)
    printed = re.search(r"## Profiles\n\n([^\n]*)", empty).group(1)
    if not stated_empty or stated_empty.group(1) != printed:
        failures.append(f"{doc}:{line_of(read(doc), m.start(1))}: the Profiles row quotes "
                        f"{stated_empty.group(1) if stated_empty else 'nothing'!r} for a store without profiles; "
                        f"the report prints {printed!r}")
    stored = json.loads(cko("profile", "ncu", "tests/fixtures/ncu/ncu_raw.csv", "--root", root,
                            "--json").stdout)["stored"]["id"]
    listed = stored in cko("report", "--root", root, "--format", "md").stdout.decode().split("## Profiles")[1]
    if listed and re.search(r"holds no profile", row):
        failures.append(f"{doc}:{line_of(read(doc), m.start(1))}: the Profiles row says the store holds no "
                        f"profiles, but the report lists a stored one ({stored})")
    if listed and "every profile record" not in row:
        failures.append(f"{doc}:{line_of(read(doc), m.start(1))}: the report lists every profile record "
                        "(cko report --format md), the Profiles row does not say so")


# --- docs/profile-ncu.md: a launch's fields -------------------------------------------------------

def check_ncu_launch_fields():
    doc = "docs/profile-ncu.md"
    m = anchor(doc, r"Each launch's JSON:\s*`\{([^}]*)\}`")
    if not m:
        return
    fields = [f.strip() for f in m.group(1).split(",")]
    always = {f.rstrip("[]") for f in fields if not f.endswith("?")}
    sometimes = {f.rstrip("?").rstrip("[]") for f in fields if f.endswith("?")}
    seen, in_every = set(), None
    formats = set()
    for fixture in sorted(glob.glob("tests/fixtures/ncu/*.csv", root_dir=REPO)):
        for extra in ([], ["--device", "h200-sxm"]):
            d = json.loads(cko("profile", "ncu", fixture, "--json", *extra).stdout)
            formats.add(d["format_version"])
            for launch in d["launches"]:
                keys = set(launch)
                seen |= keys
                in_every = keys if in_every is None else in_every & keys
    expect(doc, m, 1, sorted(always | sometimes), sorted(seen),
           "a launch's fields (cko profile ncu --json on tests/fixtures/ncu, with and without --device)")
    # A field without `?` is in every launch; one with `?` may be missing (not every fixture lacks it).
    if always - in_every:
        expect(doc, m, 1, f"{sorted(always - in_every)} in every launch", "not in every launch: mark them `?`",
               "fields every launch has")
    m = anchor(doc, r"The `--json` document is\s+`(cko/ncu-report-v\d+)`")
    if m:
        expect(doc, m, 1, [m.group(1)], sorted(formats), "format_version of cko profile ncu --json")


# --- docs/environment.md: doctor's next_step ------------------------------------------------------

def template_regex(template):
    parts = re.split(r"(<[^>]+>)", template)
    return "".join(".+" if p.startswith("<") else re.escape(p) for p in parts)


def check_doctor_next_step():
    doc = "docs/environment.md"
    m = anchor(doc, r"`next_step` is (.*?)\. Exit\s+code")
    if not m:
        return
    templates = [template_regex(t) for t in re.findall(r"`([^`]+)`", m.group(1))]
    runs = {
        "cko doctor": cko("doctor", "--json", check=(0, 3)),
        "cko doctor --require-tool no-such-tool-anywhere": cko("doctor", "--require-tool", "no-such-tool-anywhere",
                                                               "--json", check=(3,)),
        "cko doctor --spec examples/cpu-saxpy/cko.toml": cko("doctor", "--spec", "examples/cpu-saxpy/cko.toml",
                                                             "--json", check=(0, 3)),
    }
    for how, p in runs.items():
        step = json.loads(p.stdout)["next_step"]
        # One template, or one followed by another (the warnings' suffix).
        forms = templates + [a + b for a in templates for b in templates]
        if not any(re.fullmatch(f, step) for f in forms):
            failures.append(f"{doc}:{line_of(read(doc), m.start(1))}: `{how}` prints next_step {step!r}, "
                            "which no form the doc gives matches")


# --- docs/knowledge.md, README: other counts ------------------------------------------------------

def check_knowledge_cards():
    doc = "docs/knowledge.md"
    m = anchor(doc, r"The (\d+) cards \((\d+) contracts, (\d+) heuristics\)")
    if not m:
        return
    cards = json.loads(cko("knowledge", "query", "--json").stdout)["cards"]
    expect(doc, m, 1, int(m.group(1)), len(cards), "cards (cko knowledge query --json)")
    expect(doc, m, 2, int(m.group(2)), sum(c["kind"] == "contract" for c in cards), "contract cards")
    expect(doc, m, 3, int(m.group(3)), sum(c["kind"] == "heuristic" for c in cards), "heuristic cards")
    m = anchor(doc, r"`cko map --json` \(`(cko/map-v\d+)`\) carries none yet, and `--facts` refuses it "
                    r"\(`(\w+)`\)")
    if m:
        with tempfile.TemporaryDirectory(prefix="cko-doc-facts-map-") as tmp:
            path = os.path.join(tmp, "map.json")
            with open(path, "wb") as f:
                f.write(cko("map", "tests/fixtures/torch/torch_trace.json", "--json").stdout)
            with open(path, encoding="utf-8") as f:
                expect(doc, m, 1, m.group(1), json.load(f)["format_version"], "format_version of cko map --json")
            p = cko("knowledge", "query", "--facts", path, "--json", check=(0, 2))
            code = json.loads(p.stdout)["error"]["code"] if p.returncode else "accepted"
            expect(doc, m, 2, m.group(2), code, "knowledge query --facts on a cko map --json document")


def check_mutants():
    doc = "README.md"
    m = anchor(doc, r"applies (\d+) semantic\s+mutants")
    if m:
        block = re.search(r"^mutants=\((.*?)^\)", read("scripts/mutation-check.sh"), re.S | re.M).group(1)
        expect(doc, m, 1, int(m.group(1)), len(re.findall(r'^\s+"', block, re.M)),
               "mutants of scripts/mutation-check.sh")


# --- transcripts: `$ cko ...` blocks and the output the docs show -----------------------------------

def check_transcripts():
    """Each ```-block of `$ cko ...` lines on the repo's fixtures is run (in a scratch directory where
    tests/ is the repository's); the lines the doc shows after a command (`...` elides) must be lines of
    its real output, in order. Blocks that need a GPU or a store ($OUT, collect) are left out."""
    with tempfile.TemporaryDirectory(prefix="cko-doc-facts-run-") as tmp:
        os.symlink(os.path.join(REPO, "tests"), os.path.join(tmp, "tests"))
        os.symlink(CKO, os.path.join(tmp, "cko"))
        for doc in sorted(glob.glob("docs/*.md", root_dir=REPO)) + ["README.md"]:
            text = read(doc)
            for block in re.finditer(r"```[a-z]*\n(\$ cko .*?)```", text, re.S):
                if re.search(r"\$OUT|profile collect", block.group(1)):
                    continue
                run_transcript(doc, text, block, tmp)


def run_transcript(doc, text, block, tmp):
    steps = []  # (line number, command, [shown output lines])
    for offset, line in zip(re.finditer(r"^.*$", block.group(1), re.M), block.group(1).splitlines()):
        if line.startswith("$ "):
            steps.append((line_of(text, block.start(1) + offset.start()), line[2:].split("   #")[0], []))
        elif steps:
            steps[-1][2].append(line.rstrip())
    for lineno, command, shown in steps:
        p = subprocess.run(["bash", "-c", command], cwd=tmp, capture_output=True, timeout=120,
                           env={**os.environ, "PATH": tmp + os.pathsep + os.environ["PATH"]})
        real = [line.rstrip() for line in p.stdout.decode(errors="replace").splitlines()]
        at = 0
        for k, want in enumerate(shown):
            if want.strip() in ("", "...") or want.strip().startswith("... "):
                continue
            try:
                at = real.index(want, at) + 1
            except ValueError:
                near = real[min(at, len(real) - 1)] if real else "(no output)"
                failures.append(f"{doc}:{lineno + 1 + k}: `{command}` does not print {want.strip()!r} "
                                f"(here it prints {near.strip()!r}; exit {p.returncode})")
                break


# --- files and benchmarks the docs name -----------------------------------------------------------

def check_named_files_and_benches():
    bench_sources = "".join(read(p) for p in sorted(glob.glob("bench/*.cpp", root_dir=REPO)))
    bench_targets = set(re.findall(r"add_executable\((\w+) ", read("bench/CMakeLists.txt")))
    for doc in sorted(glob.glob("docs/*.md", root_dir=REPO)) + ["README.md"]:
        text = read(doc)
        for m in re.finditer(r"`((?:src|tests|bench|scripts|schemas|sdk|examples|knowledge|fuzz)/[\w./*-]+)`", text):
            path = m.group(1)
            if not glob.glob(path, root_dir=REPO):
                failures.append(f"{doc}:{line_of(text, m.start())}: `{path}` does not exist")
        for m in re.finditer(r"\b(BM_\w+)", text):
            if not re.search(rf"\b{m.group(1)}\b", bench_sources):
                failures.append(f"{doc}:{line_of(text, m.start())}: benchmark {m.group(1)} is in no bench/*.cpp")
        for m in re.finditer(r"\b(bench_[a-z0-9_]+)\b", text):
            if m.group(1) not in bench_targets:
                failures.append(f"{doc}:{line_of(text, m.start())}: {m.group(1)} is no target of bench/CMakeLists.txt")


def main():
    checks = [check_mcp, check_readme_tour, check_inline_commands, check_exit_codes, check_crash_counts,
              check_hostile_counts, check_race_counts, check_report_profiles, check_ncu_launch_fields, check_doctor_next_step,
              check_knowledge_cards, check_mutants, check_transcripts, check_named_files_and_benches]
    try:
        for check in checks:
            before = len(failures)
            check()
            print(f"{'ok  ' if len(failures) == before else 'FAIL'} {check.__name__}", flush=True)
    finally:
        for _, tmp in _world:
            crash_test.remove(tmp)
    for f in failures:
        print("  FAIL:", f, file=sys.stderr)
    print(f"doc facts: {len(checks)} checks, {len(failures)} false statements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
