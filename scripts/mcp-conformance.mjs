#!/usr/bin/env node
/**
 * `npm run conformance`: the MCP conformance suite (@modelcontextprotocol/conformance) against this
 * service's `/mcp`, for both revisions it serves (docs/mcp.md, "Conformance"). It starts the
 * service on a free port with the embedded devnet and an in-memory store, runs each scenario an
 * application server can pass without the suite's test-only tools, and prints a table (scenario,
 * revision, checks, result). It exits 1 when a scenario listed as passing fails (a regression);
 * a scenario listed with a reason is reported, never fatal. `--markdown` prints the table as
 * docs/mcp.md shows it. Runs with whatever `node` is first on PATH (the suite needs Node 22).
 */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { freePort } from "./lib/free-port.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** Why a scenario is not expected to pass; absent: it must pass. */
const TEST_TOOL = (tool) =>
  `calls the suite's test-only tool \`${tool}\`, which an application server does not list`;
const OURS = "the same requirement on `pay_quote` is tested in test/mcp/http.test.ts";
const SCENARIOS = [
  { scenario: "server-initialize", revision: "2025-11-25" },
  { scenario: "tools-list", revision: "2025-11-25" },
  { scenario: "dns-rebinding-protection", revision: "2025-11-25" },
  {
    scenario: "server-stateless",
    revision: "2026-07-28",
    reason:
      "4 of its checks call the suite's test-only tools (`test_missing_capability` twice, `test_streaming_elicitation`, `test_logging_tool`), which an application server does not list; every other check passes",
  },
  { scenario: "tools-list", revision: "2026-07-28" },
  { scenario: "dns-rebinding-protection", revision: "2026-07-28" },
  {
    scenario: "caching",
    revision: "2026-07-28",
    reason:
      "the tools/list hints pass; prompts/list, resources/list and resources/templates/list are answered -32601: this server has no prompts or resources",
  },
  { scenario: "http-header-validation", revision: "2026-07-28" },
  { scenario: "input-required-result-validate-input", revision: "2026-07-28" },
  { scenario: "input-required-result-unsupported-methods", revision: "2026-07-28" },
  { scenario: "input-required-result-missing-input-response", revision: "2026-07-28" },
  { scenario: "input-required-result-ignore-extra-params", revision: "2026-07-28" },
  ...[
    ["basic-elicitation", "elicitation", OURS],
    ["request-state", "request_state", OURS],
    ["tampered-state", "tampered_state", OURS],
    ["result-type", "result_type", OURS],
    ["capability-check", "capability_check", OURS],
    ["multi-round", "multi_round", "one round is all an approval needs"],
    ["multiple-input-requests", "multiple_input_requests", "an approval asks for one input"],
    ["basic-sampling", "sampling", "this server asks for no sampling"],
    ["basic-list-roots", "list_roots", "this server asks for no roots"],
    ["non-tool-request", "prompt", "this server has no prompts"],
  ].map(([name, tool, why]) => ({
    scenario: `input-required-result-${name}`,
    revision: "2026-07-28",
    reason: `${TEST_TOOL(`test_input_required_result_${tool}`)}; ${why}`,
  })),
];

/** The service on `port` with its embedded devnet; resolves once it listens. */
function startService(port) {
  const child = spawn(process.execPath, ["--import", "./src/early-signals.mjs", "src/start.mjs"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: "memory://",
      // The suite sends many requests in a few seconds; the rate limit is not what it checks.
      RATE_LIMIT_POINTS: "1000000",
      RATE_LIMIT_ANONYMOUS_POINTS: "1000000",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the service did not listen in 180 s:\n${output}`)),
      180_000,
    );
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}):\n${output}`));
    });
  });
  return { child, ready };
}

/** One scenario for one revision: the suite's own count of checks. */
function runScenario(url, { scenario, revision }) {
  return new Promise((resolve) => {
    const args = [CLI, "server", "--url", url, "--scenario", scenario, "--spec-version", revision];
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.once("exit", (code) => {
      const plain = stripVTControlCharacters(output);
      const counts = /Passed:\s*(\d+)\/(\d+),\s*(\d+) failed,\s*(\d+) warnings?/.exec(plain);
      const failed = [...plain.matchAll(/\[([\w-]+)\s*\]\s+FAILURE/g)].map((m) => m[1]);
      resolve({
        passed: counts ? Number(counts[1]) : 0,
        total: counts ? Number(counts[2]) : 0,
        ok: code === 0 && counts !== null && counts[3] === "0",
        warnings: counts ? Number(counts[4]) : 0,
        failed: [...new Set(failed)],
        output: plain,
      });
    });
  });
}

const markdown = process.argv.includes("--markdown");
const port = await freePort();
const service = startService(port);
let regressions = 0;
try {
  await service.ready;
  const url = `http://127.0.0.1:${port}/mcp`;
  const rows = [];
  for (const entry of SCENARIOS) {
    const result = await runScenario(url, entry);
    const passed = result.warnings > 0 ? `pass, ${result.warnings} warning(s)` : "pass";
    const verdict = result.ok ? passed : entry.reason ? "not passed" : "FAIL (regression)";
    if (!result.ok && !entry.reason) {
      regressions += 1;
      process.stderr.write(`${entry.scenario} (${entry.revision}) failed:\n${result.output}\n`);
    }
    rows.push({ ...entry, checks: `${result.passed}/${result.total}`, verdict, failed: result.failed });
  }
  if (markdown) {
    console.log("| Scenario | Revision | Checks passed | Result |");
    console.log("|---|---|---|---|");
    for (const r of rows) {
      const why = r.verdict.startsWith("pass")
        ? r.verdict
        : `${r.verdict}: ${r.reason ?? r.failed.join(", ")}`;
      console.log(`| \`${r.scenario}\` | ${r.revision} | ${r.checks} | ${why} |`);
    }
  } else {
    const width = Math.max(...rows.map((r) => r.scenario.length));
    for (const r of rows) {
      console.log(`${r.scenario.padEnd(width)}  ${r.revision}  ${r.checks.padStart(5)}  ${r.verdict}`);
    }
  }
} finally {
  service.child.kill("SIGTERM");
}
if (regressions > 0) {
  console.error(`${regressions} scenario(s) that pass here failed.`);
  process.exit(1);
}
