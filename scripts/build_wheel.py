#!/usr/bin/env python3
"""Builds the cko wheel from an already built binary, with the standard library only (no network).

The wheel installs the `cko` binary on PATH (a file of <name>.data/scripts/, the way ruff and cmake
ship binaries to Python users), cko's data files into <prefix>/share/cko/ (schemas/ and the skill
package, where an installed `cko self-check` looks for them) and the Python driver SDK `cko_driver`.
The version is the binary's own (`cko --version`), so the wheel cannot claim another.

Usage: scripts/build_wheel.py --binary build-portable/cko [--out dist]
Prints the wheel's path.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NAME = "cko"
# The portable binary links glibc dynamically and needs 2.36 or newer (Debian 12's); see `make portable`.
TAG = "py3-none-manylinux_2_36_x86_64"
SUMMARY = "cuda-kernel-optimizer: the cko CLI (evidence-based GPU performance work) and its Python driver SDK"
# PEP 440 versions as cmake/CkoBuildInfo.cmake writes them: 0.3.0, 0.3.0rc1, 0.3.0.post2+g1a2b3c4,
# 0.1.0.dev0+g1a2b3c4.dirty (already normalised, so the file name needs no escaping).
VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$")


def binary_version(binary: Path) -> str:
    """The version `binary --version` prints ("cko 0.3.0" -> "0.3.0"), checked to be PEP 440."""
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout.split()
    if len(out) != 2 or out[0] != NAME or not VERSION_RE.match(out[1]):
        raise SystemExit(f"build_wheel: {binary} --version printed {' '.join(out)!r}, not 'cko <PEP 440 version>'")
    return out[1]


def readme_snippet() -> str:
    """README.md's opening paragraph and its short tour: what cko is and how it is used."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    intro = text.split("\n\n", 2)[:2]
    tour = re.search(r"^## A short tour\n.*?(?=^## )", text, flags=re.S | re.M)
    return "\n\n".join(intro) + "\n\n" + (tour.group(0).rstrip() + "\n" if tour else "")


def metadata(version: str, license_file: Path | None) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version}",
        f"Summary: {SUMMARY}",
        "Requires-Python: >=3.8",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Environment :: GPU :: NVIDIA CUDA",
    ]
    if license_file is not None:
        lines.append(f"License-File: {license_file.name}")
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme_snippet()


def record_digest(data: bytes) -> str:
    """RECORD's hash field: sha256= and the urlsafe base64 digest without padding (the wheel spec)."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel_files(binary: Path, version: str) -> list[tuple[str, bytes, int]]:
    """(path in the wheel, bytes, unix mode) of every file but RECORD, in archive order."""
    data_dir = f"{NAME}-{version}.data"
    dist_info = f"{NAME}-{version}.dist-info"
    files: list[tuple[str, bytes, int]] = []
    sdk = REPO / "sdk" / "python" / "cko_driver"
    for path in sorted(sdk.rglob("*.py")):
        files.append((f"cko_driver/{path.relative_to(sdk).as_posix()}", path.read_bytes(), 0o644))
    files.append((f"{data_dir}/scripts/cko", binary.read_bytes(), 0o755))
    for folder in ("schemas", "skills"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(REPO).as_posix()
                files.append((f"{data_dir}/data/share/cko/{rel}", path.read_bytes(), 0o644))
    license_file = next((p for p in (REPO / "LICENSE", REPO / "LICENSE.md", REPO / "LICENSE.txt") if p.is_file()), None)
    if license_file is not None:
        files.append((f"{dist_info}/{license_file.name}", license_file.read_bytes(), 0o644))
    files.append((f"{dist_info}/METADATA", metadata(version, license_file).encode(), 0o644))
    wheel = f"Wheel-Version: 1.0\nGenerator: cko scripts/build_wheel.py\nRoot-Is-Purelib: false\nTag: {TAG}\n"
    files.append((f"{dist_info}/WHEEL", wheel.encode(), 0o644))
    return files


def zip_time() -> tuple[int, int, int, int, int, int]:
    """One timestamp for every entry (SOURCE_DATE_EPOCH, else 1980-01-01): the same inputs give the same wheel."""
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    t = time.gmtime(max(epoch, 315532800))
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def build_wheel(binary: Path, out: Path) -> Path:
    version = binary_version(binary)
    files = wheel_files(binary, version)
    record_path = f"{NAME}-{version}.dist-info/RECORD"
    record = "".join(f"{name},{record_digest(data)},{len(data)}\n" for name, data, _ in files) + f"{record_path},,\n"
    files.append((record_path, record.encode(), 0o644))
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{NAME}-{version}-{TAG}.whl"
    partial = wheel.with_name(wheel.name + ".partial")
    when = zip_time()
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=when)
            info.external_attr = (0o100000 | mode) << 16  # a regular file; pip keeps the executable bit
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    partial.replace(wheel)
    return wheel


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the cko binary to ship (e.g. build-portable/cko)")
    parser.add_argument("--out", default=REPO / "dist", type=Path, help="folder for the wheel (default dist/)")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        parser.error(f"{args.binary} is not an executable file")
    print(build_wheel(args.binary, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
