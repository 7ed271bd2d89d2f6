#!/usr/bin/env python3
"""Writes skills/cuda-kernel-optimizer/references/requests.md: every verb's request format, read
from `cko mcp` tools/list (the verb table's schemas), so the skill package never drifts from the
binary. Usage: scripts/skill-references.py CKO [OUT]   (tests/cli/skill_references_test.sh checks it)."""
import json
import subprocess
import sys

cko = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else "skills/cuda-kernel-optimizer/references/requests.md"
messages = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refs", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
reply = subprocess.run([cko, "mcp"], input="".join(json.dumps(m) + "\n" for m in messages),
                       capture_output=True, text=True, check=True, timeout=60).stdout
tools = next(m for m in map(json.loads, reply.splitlines()) if m.get("id") == 2)["result"]["tools"]


def type_of(s):
    return "list of strings" if s["type"] == "array" else s["type"]


lines = [
    "# Request formats",
    "",
    "Every verb takes one JSON object. The same object is the MCP tool's `arguments`, the",
    "`--request FILE` of the CLI, and the CLI options (`case_file` is `--case-file`; a positional",
    "argument goes by its key). Unknown keys are rejected with the list of known ones.",
    "Generated from `cko mcp` tools/list by `scripts/skill-references.py`; do not edit by hand.",
    "",
]
for t in tools:
    schema = t["inputSchema"]
    required = set(schema.get("required", []))
    flags = []
    if t["annotations"]["readOnlyHint"]:
        flags.append("read-only")
    if "detach" in schema["properties"]:
        flags.append("long: `detach` for an invocation id at once")
    lines += [f"## `{t['name']}` — {t['title']}", "", t["description"] + (f" ({'; '.join(flags)})" if flags else ""), ""]
    if not schema["properties"]:
        lines += ["No keys.", ""]
        continue
    lines += ["| key | type | default | |", "|---|---|---|---|"]
    for key, s in schema["properties"].items():
        default = "required" if key in required else ("`" + json.dumps(s["default"]) + "`" if "default" in s else "")
        lines.append(f"| `{key}` | {type_of(s)} | {default} | {s['description'].replace('|', '/')} |")
    lines.append("")
open(out, "w").write("\n".join(lines))
