#!/usr/bin/env python3
"""`make release`: the versioned artifacts of one built binary, in dist/ (docs/release.md).

  cko-VERSION-linux-x86_64.tar.gz              bin/cko, share/cko/{schemas,skills}, README.md, LICENSE
  cko-VERSION-py3-none-manylinux_2_36_x86_64.whl  cko on PATH, share/cko, the cko_driver SDK
  SHA256SUMS                                   of the two, for `sha256sum -c`

VERSION is the binary's own (`cko --version`, from the git tag at configure time). Standard library
only; the same binary and tree give byte-identical artifacts (SOURCE_DATE_EPOCH sets the one mtime).

Usage: scripts/release.py --binary build-portable/cko [--out dist]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_wheel  # noqa: E402

REPO = build_wheel.REPO


def tarball_readme(version: str, top: str, wheel_name: str) -> str:
    return f"""# cko {version} for Linux x86_64

The portable `cko`: every library inside but glibc, which stays dynamic (2.36 or newer) so that cko
can load the NVIDIA driver's NVML. `share/cko/` holds the JSON Schemas and the agent skill package
(`share/cko/skills/cuda-kernel-optimizer`), where `cko self-check` finds them next to `bin/`.

    sha256sum -c SHA256SUMS            # in the folder holding the release's files
    tar xzf {top}.tar.gz
    export PATH=$PWD/{top}/bin:$PATH
    cko self-check                     # version, schemas, skill package: "installation ok"

From Python, the wheel installs the same binary and the driver SDK `cko_driver`:
`pip install {wheel_name}`.

---

{build_wheel.readme_snippet()}"""


def tar_entry(tar: tarfile.TarFile, name: str, data: bytes, mode: int, mtime: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, mtime
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    tar.addfile(info, io.BytesIO(data))


def build_tarball(binary: Path, version: str, wheel_name: str, out: Path) -> Path:
    top = f"cko-{version}-linux-x86_64"
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    files: list[tuple[str, bytes, int]] = [("bin/cko", binary.read_bytes(), 0o755)]
    for folder in ("schemas", "skills"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files.append((f"share/cko/{path.relative_to(REPO).as_posix()}", path.read_bytes(), 0o644))
    for name in ("LICENSE", "LICENSE.md", "LICENSE.txt"):
        if (REPO / name).is_file():
            files.append((name, (REPO / name).read_bytes(), 0o644))
    files.append(("README.md", tarball_readme(version, top, wheel_name).encode(), 0o644))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in sorted(files):
            tar_entry(tar, f"{top}/{name}", data, mode, mtime)
    path = out / f"{top}.tar.gz"
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=mtime) as gz:
        gz.write(raw.getvalue())
    partial.replace(path)
    return path


def write_sums(paths: list[Path], out: Path) -> Path:
    sums = out / "SHA256SUMS"
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in paths]
    sums.write_text("".join(lines))
    return sums


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, type=Path, help="the built cko (build-portable/cko)")
    parser.add_argument("--out", default=REPO / "dist", type=Path, help="folder for the artifacts (default dist/)")
    args = parser.parse_args()
    version = build_wheel.binary_version(args.binary)
    wheel = build_wheel.build_wheel(args.binary, args.out)
    tarball = build_tarball(args.binary, version, wheel.name, args.out)
    sums = write_sums([tarball, wheel], args.out)
    for path in (tarball, wheel, sums):
        print(f"{path}  ({path.stat().st_size / 1e6:.1f} MB)" if path != sums else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
