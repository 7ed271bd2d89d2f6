// `cko mcp` driven by the official MCP TypeScript SDK client over stdio: the tool list, the CPU
// loop (doctor, target freeze, baseline, experiment new, screen, confirm, champion select,
// history), resources, and a confirm cancelled through notifications/cancelled.
// Usage: node mcp_sdk_test.mjs CKO REPO_ROOT
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [cko, repo] = process.argv.slice(2);
assert.ok(cko && repo, "usage: node mcp_sdk_test.mjs CKO REPO_ROOT");
const ex = path.join(repo, "examples", "cpu-saxpy");
execFileSync("make", ["-s", "-C", ex, "build/driver_cpp"], { stdio: "inherit" });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cko-mcp-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));

// The one-case cpu-saxpy Target of tests/cli/lib.sh (saxpy_target).
const t = path.join(tmp, "t");
fs.mkdirSync(path.join(t, "original"), { recursive: true });
fs.mkdirSync(path.join(t, "cases"), { recursive: true });
fs.copyFileSync(path.join(ex, "original", "saxpy.cpp"), path.join(t, "original", "saxpy.cpp"));
fs.copyFileSync(path.join(ex, "cases", "small.json"), path.join(t, "cases", "small.json"));
fs.writeFileSync(path.join(t, "cko.toml"), `[target]
name = "saxpy-small"
claim_layer = "kernel"
original = "original"
change_scope = ["original/saxpy.cpp"]
[cases]
dir = "cases"
ids = ["small"]
[driver]
argv = ["${ex}/build/driver_cpp"]
capabilities = ["single_subject", "paired_in_process"]
env_allow = ["PATH", "TMPDIR"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 12
samples_per_call = 3
[limits]
command_timeout_s = 60
operation_timeout_s = 600
`);
const root = path.join(t, "art");

const transport = new StdioClientTransport({ command: cko, args: ["mcp", "--root", root], stderr: "inherit" });
const client = new Client({ name: "cko-mcp-sdk-test", version: "1.0.0" });
await client.connect(transport);
assert.equal(client.getServerVersion().name, "cko");

let started = process.hrtime.bigint();
const { tools } = await client.listTools();
const listMs = Number(process.hrtime.bigint() - started) / 1e6;
const help = await client.callTool({ name: "help", arguments: {} });
const names = new Set(tools.map((tool) => tool.name));
for (const want of ["doctor", "target_freeze", "baseline", "experiment_new", "screen", "confirm", "champion_select",
                    "history", "status", "wait", "ls", "show", "self-check"]) {
  assert.ok(names.has(want), `tools/list lacks ${want}`);
}
assert.equal(names.size, tools.length, "tool names are unique");
for (const tool of tools) {
  assert.equal(tool.inputSchema.type, "object", tool.name);
}
// One tool per verb: every leaf of `cko help`'s verb tree is a tool, and every tool is in the tree.
const inTree = new Set();
const walk = (rows, prefix) => {
  for (const row of rows) {
    const name = prefix ? `${prefix}_${row.name}` : row.name;
    if (!row.verbs || names.has(name)) inTree.add(name);
    if (row.verbs) walk(row.verbs, name);
  }
};
walk(help.structuredContent.verbs, "");
assert.deepEqual([...inTree].sort(), [...names].sort());
console.log(`tools/list: ${tools.length} tools in ${listMs.toFixed(1)} ms (first call, includes the round trip)`);
started = process.hrtime.bigint();
for (let i = 0; i < 20; i++) await client.listTools();
console.log(`tools/list: ${(Number(process.hrtime.bigint() - started) / 1e6 / 20).toFixed(2)} ms per call (mean of 20)`);

// Every tool refuses a key its request does not have, before it runs anything, naming the key; a
// value out of range is refused the same way (the rules a CLI --request file meets).
for (const tool of tools) {
  const r = await client.callTool({ name: tool.name, arguments: { no_such_key: 1 } });
  assert.equal(r.isError, true, `${tool.name} took a misspelt key: ${JSON.stringify(r.structuredContent)}`);
  const e = r.structuredContent.error;
  assert.equal(e.code, "invalid_request", `${tool.name}: ${JSON.stringify(e)}`);
  assert.equal(e.details.key, "no_such_key", `${tool.name}: ${JSON.stringify(e)}`);
  assert.match(e.message, /request key "no_such_key" is not a key/, tool.name);
}
for (const m of [-1, 0, 1001]) {
  const r = await client.callTool({ name: "experiment_new", arguments: { candidate: "c", minimum_effect_pct: m } });
  assert.equal(r.isError, true, `minimum_effect_pct ${m} accepted`);
  assert.equal(r.structuredContent.error.code, "invalid_request");
  assert.equal(r.structuredContent.error.details.key, "minimum_effect_pct", JSON.stringify(r.structuredContent.error));
}
console.log(`misspelt key: refused by each of ${tools.length} tools`);

// Every call: the outcome document is structuredContent; a failure is a tool error with cko's code.
async function call(name, args, options = {}) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  return result;
}
async function ok(name, args, options) {
  const r = await call(name, args, options);
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content[0].type, "text");
  return r.structuredContent;
}

const doctor = await call("doctor", { tool_timeout_ms: 1000 });
assert.ok(doctor.structuredContent.format_version.startsWith("cko/doctor"), JSON.stringify(doctor.structuredContent));

const target = await ok("target_freeze", { spec: path.join(t, "cko.toml"), root });
assert.match(target.id, /.+/);

const progress = [];
const baseline = await ok("baseline", { root, calls_per_case: 1, aa_pairs: 6 },
                          { onprogress: (p) => progress.push(p) });
assert.equal(baseline.state, "succeeded");
assert.ok(progress.some((p) => p.message === `invocation ${baseline.id}`), JSON.stringify(progress));
// Progress increases with every notification; the baseline's steps are counted in driver calls
// (a total, the unit in _meta) and never pass their total.
for (let i = 1; i < progress.length; ++i) {
  assert.ok(progress[i].progress > progress[i - 1].progress, JSON.stringify(progress));
}
const calls = progress.filter((p) => p.total !== undefined);
assert.ok(calls.length > 0 && calls.every((p) => p.progress <= p.total && p._meta?.["cko/unit"] === "calls"),
          JSON.stringify(progress));

const exp = await ok("experiment_new", { root, candidate: path.join(ex, "candidate"), hypothesis: "rows are contiguous",
                                         mechanism: "loop-order", failure_closes: "mechanism",
                                         no_falsifier_reason: "known" });
const screenProgress = [];
const screen = await ok("screen", { root, experiment: exp.id }, { onprogress: (p) => screenProgress.push(p) });
// A comparison counts pairs against the pairs planned, and once a pair is done says the running
// effect and the time left, in the message and in _meta.
const pairs = screenProgress.filter((p) => p._meta?.["cko/unit"] === "pairs");
assert.ok(pairs.length >= 2, JSON.stringify(screenProgress));
assert.ok(pairs.every((p) => Math.abs((p.total - p.progress) - (p._meta["cko/total"] - p._meta["cko/done"])) < 1e-9),
          JSON.stringify(pairs));
const later = pairs.filter((p) => p._meta["cko/done"] >= 1);
assert.ok(later.length > 0 && later.every((p) => typeof p._meta["cko/effect_pct_so_far"] === "number" &&
                                                 typeof p._meta["cko/eta_s"] === "number" &&
                                                 /effect so far [+-]\d/.test(p.message) && /s left/.test(p.message)),
          JSON.stringify(pairs));
assert.equal(screen.result.outputs.verdict, "improved", JSON.stringify(screen.result.outputs));
assert.equal(screen.result.outputs.decision, "pass_to_confirm");
// What the evidence allows next, as the CLI's `next:` line says it: a screen that passes the
// candidate on names its confirm.
assert.deepEqual(screen.next_step, {
  statement: "the screen passes it on: confirm it (the verdict that can make a champion)",
  command: `cko confirm ${exp.id} --root ${root}`,
});

// A detached confirm returns its id at once; wait gives the same document a direct run would.
const detached = await ok("confirm", { root, experiment: exp.id, detach: true });
assert.equal(detached.detached, true);
const waited = await call("wait", { root, id: detached.id, timeout: 300 });
assert.equal(waited.isError, false);
assert.equal(waited.structuredContent.state, "succeeded");
assert.equal(waited.structuredContent.result.outputs.verdict, "improved");
assert.equal(waited._meta["cko/exit_code"], 0);
const status = await ok("status", { root, id: detached.id });
assert.deepEqual(status, waited.structuredContent);
// An improved confirm allows one step, an explicit choice: champion select of this experiment with
// this confirm, in the document and in the text (taken just below).
assert.deepEqual(waited.structuredContent.next_step, {
  statement: "improved beyond the minimum effect: it may become the champion (an explicit choice)",
  command: `cko champion select --root ${root} --experiment ${exp.id} --confirm ${detached.id}`,
});
assert.ok(waited.content[0].text.includes(`next: ${waited.structuredContent.next_step.statement}\n` +
                                          `  ${waited.structuredContent.next_step.command}`),
          waited.content[0].text);

const selection = await ok("champion_select", { root, experiment: exp.id, confirm: detached.id });
assert.match(selection.id, /^sel-/);
const history = await ok("history", { root });
assert.ok(JSON.stringify(history).includes(detached.id));
// The server's --root is the default of a call that names none.
assert.deepEqual(await ok("history", {}), history);

// A second confirm on a second experiment, cancelled as soon as its invocation exists.
const cand2 = path.join(tmp, "cand2");
fs.mkdirSync(cand2);
fs.writeFileSync(path.join(cand2, "saxpy.cpp"),
                 fs.readFileSync(path.join(ex, "candidate", "saxpy.cpp"), "utf8") + "\n// a second candidate\n");
const exp2 = await ok("experiment_new", { root, candidate: cand2, hypothesis: "the same change again",
                                          mechanism: "loop-order-2", failure_closes: "mechanism",
                                          no_falsifier_reason: "known" });
const cancelTarget = exp2.id;
const controller = new AbortController();
let cancelledId = null;
const pending = call("confirm", { root, experiment: cancelTarget }, {
  signal: controller.signal,
  onprogress: (p) => {
    const m = /^invocation (inv-\S+)$/.exec(p.message ?? "");
    if (m && !cancelledId) {
      cancelledId = m[1];
      controller.abort("the test cancels this confirm");
    }
  },
});
const early = await pending.then((r) => r, (e) => null);
assert.equal(early, null, `the cancelled confirm answered: ${JSON.stringify(early)}`);
assert.ok(cancelledId, "the confirm announced its invocation before it was cancelled");
const ended = await call("wait", { root, id: cancelledId, timeout: 120 });
assert.equal(ended.structuredContent.state, "cancelled", JSON.stringify(ended.structuredContent));
assert.equal(ended._meta["cko/exit_code"], 4);
// An operation that did not succeed is a tool error with its reason, as the direct call's would be.
assert.equal(ended.isError, true);
assert.equal(ended.structuredContent.error.code, "interrupted", JSON.stringify(ended.structuredContent.error));
assert.match(ended.content[0].text, /cko: error\[interrupted\]/);
// A cancelled confirm decided nothing: it may be run again.
assert.deepEqual(ended.structuredContent.next_step, {
  statement: "cancelled: nothing was decided; run it again when the budget allows",
  command: `cko confirm ${cancelTarget} --root ${root}`,
});

// Resources: the store's records.
const { resources } = await client.listResources();
const uris = resources.map((r) => r.uri);
assert.ok(uris.includes(`cko://${root}/target`), uris.join(" "));
assert.ok(uris.includes(`cko://${root}/experiments/${exp.id}`));
assert.ok(uris.includes(`cko://${root}/invocations/${detached.id}`));
const champion = await client.readResource({ uri: `cko://${root}/champion` });
assert.equal(JSON.parse(champion.contents[0].text).champion, exp.id);

// A tool error carries cko's code.
const bad = await call("show", { root, id: "exp-nope" });
assert.equal(bad.isError, true);
assert.equal(bad.structuredContent.error.code, "not_found");

await client.close();
console.log("mcp sdk test: ok");
