"""Reads and validates a `cko/driver-request-v1` document (PROTOCOL.md) into plain objects."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, List, Optional

REQUEST_FORMAT = "cko/driver-request-v1"
MODES = ("smoke", "single", "paired")


class RequestError(Exception):
    """The request file is missing or does not follow cko/driver-request-v1."""


@dataclass(frozen=True)
class Case:
    id: str
    path: str

    def load_json(self) -> Any:
        """Reads the case file as JSON (the SDK never loads it on its own)."""
        with open(self.path, "r", encoding="utf-8") as f:
            return json.load(f)


@dataclass(frozen=True)
class Subject:
    role: str
    label: str
    path: str
    # The digest of the snapshot at `path` (request.subjects[].digest; None from a cko that names
    # none). The result reports it as this subject's loaded_digest, taken from the Subject that was
    # prepared and timed, so cko can refuse samples reported under the wrong role (role_mismatch).
    digest: Optional[str] = None


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str


PROFILE_KINDS = ("torch",)


@dataclass(frozen=True)
class Profile:
    """The request's optional `profile`: cko asks for a profiler trace of this call
    (`cko profile collect torch`). kind "torch": run torch.profiler around the timed samples and
    export a Chrome trace to trace_path (inside output_dir; listed in the result's artifacts)."""
    kind: str
    trace_path: str


@dataclass(frozen=True)
class Request:
    mode: str
    case: Case
    subjects: List[Subject]
    order: List[str]  # execution order of roles; for one subject just [role]
    samples: int
    seed: int
    primary: Metric
    constraints: List[Metric]
    correctness_metrics: List[str]
    output_dir: str
    result_path: str
    deadline_unix_s: Optional[float]
    raw: dict = field(repr=False, compare=False, default_factory=dict)
    profile: Optional[Profile] = None

    def subject(self, role: str) -> Subject:
        for s in self.subjects:
            if s.role == role:
                return s
        raise KeyError(role)


def _get(obj: Any, key: str, kind, where: str):
    if not isinstance(obj, dict):
        raise RequestError(f"{where} must be an object")
    if key not in obj:
        raise RequestError(f"{where}.{key} is missing")
    value = obj[key]
    # bool is an int in Python; never accept it where a number is meant.
    if isinstance(value, bool) and kind is not bool:
        raise RequestError(f"{where}.{key} must be {getattr(kind, '__name__', kind)}, got a boolean")
    if not isinstance(value, kind):
        raise RequestError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def _nonempty_str(obj: Any, key: str, where: str) -> str:
    value = _get(obj, key, str, where)
    if not value:
        raise RequestError(f"{where}.{key} must not be empty")
    return value


def _metric(obj: Any, where: str) -> Metric:
    return Metric(_nonempty_str(obj, "name", where), _nonempty_str(obj, "unit", where))


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_request(doc: Any) -> Request:
    """Validates a decoded request; raises RequestError naming the first offending field."""
    w = "request"
    version = _get(doc, "format_version", str, w)
    if version != REQUEST_FORMAT:
        raise RequestError(f"request.format_version is {version!r}, this SDK reads {REQUEST_FORMAT!r}")
    mode = _get(doc, "mode", str, w)
    if mode not in MODES:
        raise RequestError(f"request.mode is {mode!r}; expected one of {', '.join(MODES)}")
    case_obj = _get(doc, "case", dict, w)
    case = Case(_nonempty_str(case_obj, "id", "request.case"), _nonempty_str(case_obj, "path", "request.case"))

    subjects_raw = _get(doc, "subjects", list, w)
    subjects = []
    for i, s in enumerate(subjects_raw):
        where = f"request.subjects[{i}]"
        digest = None
        if isinstance(s, dict) and s.get("digest") is not None:
            digest = _nonempty_str(s, "digest", where)
        subjects.append(Subject(_nonempty_str(s, "role", where), _get(s, "label", str, where),
                                _nonempty_str(s, "path", where), digest))
    roles = [s.role for s in subjects]
    if len(set(roles)) != len(roles):
        raise RequestError(f"request.subjects has duplicate roles: {roles}")
    expected = 2 if mode == "paired" else 1
    if len(subjects) != expected:
        raise RequestError(f"request.mode {mode!r} needs {expected} subject(s), got {len(subjects)}")

    # Outside paired mode the order may be absent, null or empty: there is only one subject.
    order_raw = doc.get("order")
    if mode == "paired" or order_raw not in (None, []):
        order = _get(doc, "order", list, w)
        if sorted(o for o in order if isinstance(o, str)) != sorted(roles) or len(order) != len(roles):
            raise RequestError(f"request.order {order} must list each subject role exactly once {roles}")
    else:
        order = roles

    samples = _get(doc, "samples", int, w)
    if samples < 1:
        raise RequestError(f"request.samples must be >= 1, got {samples}")
    seed = _get(doc, "seed", int, w)

    objective = _get(doc, "objective", dict, w)
    primary = _metric(_get(objective, "primary", dict, "request.objective"), "request.objective.primary")
    constraints = [_metric(c, f"request.objective.constraints[{i}]")
                   for i, c in enumerate(_get(objective, "constraints", list, "request.objective"))]
    names = [primary.name] + [c.name for c in constraints]
    if len(set(names)) != len(names):
        raise RequestError(f"request.objective repeats a metric name: {names}")

    correctness = _get(doc, "correctness", dict, w)
    metrics = _get(correctness, "metrics", list, "request.correctness")
    if not all(isinstance(m, str) and m for m in metrics) or len(set(metrics)) != len(metrics):
        raise RequestError("request.correctness.metrics must be unique non-empty strings")

    output_dir = _nonempty_str(doc, "output_dir", w)
    result_path = _nonempty_str(doc, "result_path", w)
    if not os.path.isabs(output_dir) or not os.path.isabs(result_path):
        raise RequestError("request.output_dir and request.result_path must be absolute paths")
    if os.path.dirname(os.path.normpath(result_path)) != os.path.normpath(output_dir):
        raise RequestError("request.result_path must be a file directly inside request.output_dir")

    deadline = doc.get("deadline_unix_s")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, (int, float))
                                 or not math.isfinite(deadline)):
        raise RequestError("request.deadline_unix_s must be a number")

    profile = None
    if doc.get("profile") is not None:
        profile_obj = _get(doc, "profile", dict, w)
        kind = _nonempty_str(profile_obj, "kind", "request.profile")
        if kind not in PROFILE_KINDS:
            raise RequestError(f"request.profile.kind is {kind!r}; this SDK can take {', '.join(PROFILE_KINDS)}")
        trace_path = _nonempty_str(profile_obj, "trace_path", "request.profile")
        inside = os.path.normpath(trace_path)
        if not os.path.isabs(trace_path) or os.path.dirname(inside) != os.path.normpath(output_dir) or \
                inside == os.path.normpath(result_path):
            raise RequestError("request.profile.trace_path must be a file directly inside request.output_dir")
        profile = Profile(kind, trace_path)

    return Request(mode, case, subjects, list(order), samples, seed, primary, constraints, list(metrics),
                   output_dir, result_path, None if deadline is None else float(deadline), raw=doc,
                   profile=profile)


def load_request(path: str) -> Request:
    """Reads the request file at `path` (strict JSON: NaN/Infinity and duplicate keys rejected)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise RequestError(f"duplicate key in request: {sorted(k for k in keys if keys.count(k) > 1)[0]!r}")
        return dict(pairs)

    try:
        with open(path, "r", encoding="utf-8") as f:
            doc = json.load(f, object_pairs_hook=no_duplicates, parse_constant=_reject_constant)
    except OSError as e:
        raise RequestError(f"cannot read request file {path}: {e.strerror}") from e
    except ValueError as e:
        raise RequestError(f"request file {path} is not valid JSON: {e}") from e
    return parse_request(doc)
