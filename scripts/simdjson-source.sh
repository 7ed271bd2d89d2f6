#!/usr/bin/env bash
# Unpacks Debian's simdjson source package into DIR (default build-static/_deps): Debian ships no
# libsimdjson.a, so the static build compiles simdjson's single-file amalgamation itself.
# Uses a private apt state under DIR; the system's apt configuration is not touched.
set -euo pipefail
dest=${1:-build-static/_deps}
mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial"
dest=$(cd "$dest" && pwd)
if ls -d "$dest"/simdjson-*/singleheader >/dev/null 2>&1; then
  exit 0
fi
version=$(dpkg-query -W -f='${Version}' libsimdjson-dev 2>/dev/null || true)
cat >"$dest/apt/sources.list" <<SRC
deb-src http://deb.debian.org/debian bookworm main
SRC
apt_opts=(-o "Dir::Etc::SourceList=$dest/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$dest/apt/lists" -o "Dir::Cache=$dest/apt/cache"
          -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" update -qq
cd "$dest"
apt-get "${apt_opts[@]}" source --download-only -qq "simdjson${version:+=$version}"
tar xzf simdjson_*.orig.tar.gz
ls -d "$dest"/simdjson-*/singleheader >/dev/null
