"""Builds a `cko/driver-result-v1` document and publishes it atomically at the request's result_path."""
from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Dict, List, Optional

RESULT_FORMAT = "cko/driver-result-v1"
# v1 + every subject's loaded_digest: written when the request names every subject's digest.
RESULT_FORMAT_V2 = "cko/driver-result-v2"
STATUSES = ("passed", "failed", "error")


def subject_result(role: str, status: str, metrics: Dict[str, float], primary, primary_samples: List[float],
                   constraints, constraint_samples: Dict[str, List[float]],
                   loaded_digest: Optional[str] = None) -> dict:
    """Exactly {role, [loaded_digest,] correctness, measurements}: cko reads subjects strictly.
    loaded_digest: the digest of the subject these samples were measured on (not looked up by role)."""
    assert status in STATUSES
    doc = {
        "role": role,
        "correctness": {"status": status, "metrics": dict(metrics)},
        "measurements": {
            "primary": {"name": primary.name, "unit": primary.unit, "samples": list(primary_samples)},
            "constraints": [{"name": c.name, "unit": c.unit, "samples": list(constraint_samples.get(c.name, []))}
                            for c in constraints],
        },
    }
    if loaded_digest is not None:
        doc["loaded_digest"] = loaded_digest
    return doc


def list_artifacts(output_dir: str, result_path: str) -> List[str]:
    """Every file under output_dir except the result itself, as sorted POSIX relative paths."""
    found = []
    result_abs = os.path.abspath(result_path)
    for root, _dirs, files in os.walk(output_dir):
        for name in files:
            path = os.path.join(root, name)
            if os.path.abspath(path) != result_abs:
                found.append(os.path.relpath(path, output_dir).replace(os.sep, "/"))
    return sorted(found)


def _check_finite(value, where: str):
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} is not finite ({value})")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, f"{where}[{i}]")


def write_result_atomically(result_path: str, doc: dict) -> None:
    """Writes to a temp file beside result_path and renames it over; the temp never remains.

    No fsync: the rename already makes cko see the whole result or none, and cko makes the file
    durable with the call's other files before it ledgers them (an fsync here cost every request
    about a millisecond of the SDK's share, [21])."""
    _check_finite(doc, "result")
    data = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False).encode("utf-8") + b"\n"
    directory = os.path.dirname(result_path)
    fd, tmp = tempfile.mkstemp(prefix=".result-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, result_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
