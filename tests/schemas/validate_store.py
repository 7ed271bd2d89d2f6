#!/usr/bin/env python3
"""Validates what cko wrote against the JSON Schemas in schemas/ (draft 2020-12, the real jsonschema).

  validate_store.py ROOT [ROOT ...]        every record of each artifact root
  validate_store.py --document FILE [--schema NAME]
                                           one document (a --json output); NAME defaults to the
                                           schema its format_version names ("error-v1" for errors)

In a root: every JSON record is checked against the schema its format_version names
(cko/<name>-vN -> schemas/<name>-vN.json; an unknown or missing format_version is a violation),
and the record must be the kind its location says (target.json is a cko/target-v1 ...); every
events.jsonl line against invocation-event-v1 (seq 0, 1, 2 ...); every driver/NNNN/request.json
against driver-request-v1; and every driver/NNNN/out/result.json whose call cko validated (a
`call_validated` event with ok true) against driver-result-v1 or -v2 (by format_version). Results cko rejected are the
driver's mistakes, already recorded as such, and are not checked. Snapshot payloads
(objects/sha256/*/files), workspaces and the rest of the drivers' output directories are user
content and are skipped; so are ledger.jsonl and monitor.jsonl, which have no schema here.

Prints a count per kind; exits 1 on any violation, naming the file, the JSON path and the message.
Only the standard library and jsonschema (Draft202012Validator).
"""
import argparse
import json
import os
import re
import sys
from collections import Counter

import jsonschema
from jsonschema import Draft202012Validator

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMAS = os.path.normpath(os.path.join(HERE, "..", "..", "schemas"))
FORMAT_RE = re.compile(r"^cko/([a-z0-9][a-z0-9-]*-v[0-9]+)$")
MAX_ERRORS_PER_FILE = 20

# Where a record lives says which kind it must be (paths relative to the root, '/'-separated).
LOCATIONS = [
    (re.compile(r"^store\.json$"), "store-v1"),
    (re.compile(r"^target\.json$"), "target-v1"),
    (re.compile(r"^stop\.json$"), "stop-v1"),
    (re.compile(r"^objects/sha256/[0-9a-f]{64}/manifest\.json$"), "snapshot-manifest-v1"),
    (re.compile(r"^experiments/[^/]+\.json$"), "experiment-v1"),
    (re.compile(r"^champion/current\.json$"), "champion-v1"),
    (re.compile(r"^champion/selections/[^/]+\.json$"), "selection-v1"),
    (re.compile(r"^conclusions/[^/]+\.json$"), "conclusion-v1"),
    (re.compile(r"^hypotheses/hyp-[^/]+\.json$"), "hypothesis-v1"),
    (re.compile(r"^hypotheses/settlements/[^/]+\.json$"), "hypothesis-settlement-v1"),
    (re.compile(r"^invocations/[^/]+/request\.json$"), "invocation-request-v1"),
    (re.compile(r"^invocations/[^/]+/result\.json$"), "invocation-result-v1"),
    (re.compile(r"^invocations/[^/]+/driver/[0-9]{4,}/request\.json$"), "driver-request-v1"),
    (re.compile(r"^invocations/[^/]+/driver/[0-9]{4,}/process\.json$"), "process-v1"),
    (re.compile(r"^invocations/[^/]+/driver/[0-9]{4,}/slurm\.json$"), "slurm-call-v1"),
    (re.compile(r"^invocations/[^/]+/driver/[0-9]{4,}/node-doctor\.json$"), "doctor-v1"),
]
SKIP_DIRS = [
    re.compile(r"^objects/sha256/[^/]+/files$"),      # snapshot payloads: user content
    re.compile(r"^invocations/[^/]+/workspace$"),     # materialized subjects and cases
    re.compile(r"^invocations/[^/]+/driver/[^/]+/out$"),  # the driver's own output (see driver results)
]
SKIP_FILES = {"ledger.jsonl", "monitor.jsonl", ".lock"}


class Violations:
    def __init__(self):
        self.count = 0

    def add(self, where, path, message):
        self.count += 1
        if len(message) > 400:
            message = message[:400] + " …"
        print(f"INVALID {where}: {path}: {message}")


def json_path(parts):
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(p)) else f"[{json.dumps(p)}]")
    return out


def strict_loads(text):
    """json.loads that refuses NaN/Infinity and duplicate keys, as cko's own reader does."""
    def no_constant(name):
        raise ValueError(f"non-finite number {name}")

    def no_duplicates(pairs):
        obj = {}
        for k, v in pairs:
            if k in obj:
                raise ValueError(f"duplicate key {k!r}")
            obj[k] = v
        return obj

    return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)


class Schemas:
    def __init__(self, directory):
        self.directory = directory
        self.by_name = {}
        store = {}
        for entry in sorted(os.listdir(directory)):
            if entry.endswith(".json"):
                with open(os.path.join(directory, entry), encoding="utf-8") as f:
                    schema = json.load(f)
                Draft202012Validator.check_schema(schema)
                name = entry[: -len(".json")]
                expected_id = f"https://cko.dev/schemas/{entry}"
                if schema.get("$id") != expected_id:
                    raise SystemExit(f"{entry}: $id is {schema.get('$id')!r}, expected {expected_id}")
                self.by_name[name] = schema
                store[schema["$id"]] = schema
        self._validators = {}
        self._store = store

    def validator(self, name):
        if name not in self._validators:
            schema = self.by_name[name]
            try:  # jsonschema >= 4.18 resolves references through a `referencing` registry
                from referencing import Registry, Resource
                registry = Registry().with_resources(
                    (uri, Resource.from_contents(s)) for uri, s in self._store.items())
                v = Draft202012Validator(schema, registry=registry)
            except ImportError:  # Debian's 4.10
                resolver = jsonschema.RefResolver.from_schema(schema, store=self._store)
                v = Draft202012Validator(schema, resolver=resolver)
            self._validators[name] = v
        return self._validators[name]

    def check(self, name, instance, where, violations):
        if name not in self.by_name:
            violations.add(where, "$", f"no schema {name}.json in {self.directory}")
            return False
        errors = sorted(self.validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
        for e in errors[:MAX_ERRORS_PER_FILE]:
            detail = e.message
            if e.context:  # oneOf/anyOf: the closest branch says more than "not valid under any"
                best = jsonschema.exceptions.best_match(e.context)
                if best is not None:
                    detail += f" (closest: {json_path(best.absolute_path)}: {best.message})"
            violations.add(where, json_path(e.absolute_path), f"[{name}] {detail}")
        if len(errors) > MAX_ERRORS_PER_FILE:
            violations.add(where, "$", f"... and {len(errors) - MAX_ERRORS_PER_FILE} more errors")
        return not errors


def schema_name_of(doc):
    fv = doc.get("format_version") if isinstance(doc, dict) else None
    if not isinstance(fv, str):
        return None, "no format_version"
    m = FORMAT_RE.match(fv)
    if not m:
        return None, f"format_version {fv!r} is not cko/<name>-vN"
    return m.group(1), None


def load(path, where, violations):
    try:
        with open(path, "rb") as f:
            return strict_loads(f.read().decode("utf-8")), True
    except (OSError, ValueError, UnicodeDecodeError) as e:
        violations.add(where, "$", f"cannot be read as strict JSON: {e}")
        return None, False


def validate_record(schemas, path, rel, where, counts, violations):
    doc, ok = load(path, where, violations)
    if not ok:
        return
    name, problem = schema_name_of(doc)
    if name is None:
        violations.add(where, "$.format_version", problem)
        return
    for pattern, expected in LOCATIONS:
        if pattern.match(rel) and name != expected:
            violations.add(where, "$.format_version", f"cko/{name} where a cko/{expected} belongs")
            return
    if name not in schemas.by_name:
        violations.add(where, "$.format_version", f"unknown format_version cko/{name} (no schemas/{name}.json)")
        return
    schemas.check(name, doc, where, violations)
    counts[name] += 1


def validated_calls(events_path):
    """Call numbers whose result cko validated, from the call_validated events."""
    calls = set()
    try:
        with open(events_path, encoding="utf-8") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                data = ev.get("data") if isinstance(ev, dict) else None
                if ev.get("type") == "call_validated" and isinstance(data, dict) and data.get("ok") is True:
                    m = re.search(r"-call-([0-9]+)-validation$", str(data.get("id", "")))
                    if m:
                        calls.add(int(m.group(1)))
    except OSError:
        pass
    return calls


def ended_normally(invocation_dir):
    """True when the invocation has a result that its owner wrote (not `lost`, not missing)."""
    try:
        with open(os.path.join(invocation_dir, "result.json"), encoding="utf-8") as f:
            return json.load(f).get("state") != "lost"
    except (OSError, ValueError, AttributeError):
        return False


def validate_events(schemas, path, where, counts, violations):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as e:
        violations.add(where, "$", f"cannot be read: {e}")
        return
    if lines and lines[-1] == "":
        lines.pop()
    elif ended_normally(os.path.dirname(path)):
        violations.add(where, "$", "does not end with a newline, although the invocation finished normally")
    else:  # an owner that died mid-write may tear the last line; cko's reader skips it too
        print(f"note {where}: torn last line of an unfinished or lost invocation, not checked")
        lines.pop()
    for i, line in enumerate(lines):
        line_where = f"{where}:{i + 1}"
        try:
            ev = strict_loads(line)
        except ValueError as e:
            violations.add(line_where, "$", f"not strict JSON: {e}")
            continue
        if schemas.check("invocation-event-v1", ev, line_where, violations):
            if ev["seq"] != i:
                violations.add(line_where, "$.seq", f"{ev['seq']}, expected {i} (seq counts lines from 0)")
        counts["invocation-event-v1"] += 1


def validate_root(schemas, root, counts, violations):
    root = os.path.abspath(root)
    if not os.path.isfile(os.path.join(root, "store.json")):
        violations.add(root, "$", "not an artifact root (no store.json)")
        return
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = sorted(d for d in dirnames
                             if not any(p.match(f"{rel_dir}/{d}".lstrip("/")) for p in SKIP_DIRS))
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}".lstrip("/")
            path = os.path.join(dirpath, name)
            if name in SKIP_FILES or not (name.endswith(".json") or name.endswith(".jsonl")):
                continue
            if name == "events.jsonl":
                validate_events(schemas, path, path, counts, violations)
            elif name.endswith(".jsonl"):
                violations.add(path, "$", "a .jsonl file this validator knows no schema for")
            else:
                validate_record(schemas, path, rel, path, counts, violations)
    # Driver results: only those cko accepted.
    inv_dir = os.path.join(root, "invocations")
    for inv in sorted(os.listdir(inv_dir)) if os.path.isdir(inv_dir) else []:
        for n in sorted(validated_calls(os.path.join(inv_dir, inv, "events.jsonl"))):
            path = os.path.join(inv_dir, inv, "driver", f"{n:04d}", "out", "result.json")
            if not os.path.isfile(path):
                violations.add(path, "$", "missing, although the call_validated event says ok")
                continue
            doc, ok = load(path, path, violations)
            if ok:
                # v2 (the SDKs, with loaded_digest) or v1 (hand-written drivers): by format_version.
                name = "driver-result-v2" if isinstance(doc, dict) and \
                    doc.get("format_version") == "cko/driver-result-v2" else "driver-result-v1"
                schemas.check(name, doc, path, violations)
                counts[name] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", help="artifact roots")
    ap.add_argument("--schemas", default=DEFAULT_SCHEMAS, help="the schemas directory (default: the repo's)")
    ap.add_argument("--document", action="append", default=[], help="validate one JSON document (repeatable)")
    ap.add_argument("--schema", help="with --document: the schema name, e.g. error-v1 (default: from format_version)")
    args = ap.parse_args()
    if not args.roots and not args.document:
        ap.error("give artifact roots or --document FILE")

    schemas = Schemas(args.schemas)
    counts = Counter()
    violations = Violations()
    for doc_path in args.document:
        doc, ok = load(doc_path, doc_path, violations)
        if not ok:
            continue
        name = args.schema
        if name is None:
            name, problem = schema_name_of(doc)
            if name is None:
                violations.add(doc_path, "$.format_version", problem + " (give --schema)")
                continue
        if schemas.check(name, doc, doc_path, violations):
            counts[name] += 1
    for root in args.roots:
        validate_root(schemas, root, counts, violations)

    try:
        from importlib.metadata import version
        jsonschema_version = version("jsonschema")
    except Exception:  # noqa: BLE001 - the version is only informative
        jsonschema_version = "?"
    print(f"jsonschema {jsonschema_version}, {len(schemas.by_name)} schemas from {args.schemas}")
    for name in sorted(counts):
        print(f"  {name:<24} {counts[name]:>6} checked")
    if violations.count:
        print(f"FAILED: {violations.count} violation(s)")
        return 1
    print(f"ok: {sum(counts.values())} documents checked, all valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
