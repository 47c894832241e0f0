#!/usr/bin/env node
/**
 * `x402-chat-agent` (package.json `bin`; `npx --no x402-chat-agent chat` from a checkout, `npm run
 * chat`; `npx --no x402-chat-agent mcp`, the stdio MCP bridge; `npx --no x402-chat-agent signer new`, a key for
 * SIGNERS_FILE). Runs the terminal chat compiled into dist/cli/main.js (scripts/build-client.mjs), built
 * first when it is missing or a source changed, so it is never stale; should the build fail, it
 * runs the TypeScript source through tsx.
 *
 * The operator's commands (`keys`, `pause`, `resume`, `audit`; docs/deploy.md#operating-it) need
 * the store and the service's configuration: they run from the service's own build, dist/main.js
 * (scripts/build.mjs, as `npm start` does), told so by a marker src/main.ts reads.
 */
import { pathToFileURL } from "node:url";

const OPERATOR_COMMANDS = new Set(["keys", "pause", "resume", "audit"]);

async function runOperator(argv) {
  globalThis[Symbol.for("x402-chat-agent.operator-argv")] = argv;
  const { canBuild, ensureBuilt, OUTFILE, staleness } = await import("../scripts/build.mjs");
  if (!canBuild()) {
    const reason = staleness({ packages: false });
    if (reason) {
      process.stderr.write(
        `x402-chat-agent: dist/main.js cannot be run (${reason}); run \`npm run build\` first\n`,
      );
      process.exitCode = 1;
      return;
    }
    await import(pathToFileURL(OUTFILE).href);
    return;
  }
  try {
    await ensureBuilt();
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(OUTFILE).href);
  } catch (error) {
    process.stderr.write(
      `x402-chat-agent: cannot build dist/main.js (${error instanceof Error ? error.message : error}); running from source\n`,
    );
    const { register } = await import("tsx/esm/api");
    register();
    await import(new URL("../src/main.ts", import.meta.url).href);
  }
}

if (OPERATOR_COMMANDS.has(process.argv[2] ?? "")) {
  await runOperator(process.argv.slice(2));
} else {
  await runChat();
}

async function runChat() {
  let entry;
  try {
    const { CLI_OUTFILE, ensureClientBuilt } = await import("../scripts/build-client.mjs");
    await ensureClientBuilt();
    entry = pathToFileURL(CLI_OUTFILE).href;
  } catch (error) {
    process.stderr.write(
      `x402-chat-agent: cannot build dist/cli/main.js (${error instanceof Error ? error.message : error}); running from source\n`,
    );
    const { register } = await import("tsx/esm/api");
    register();
    entry = new URL("../src/cli/main.ts", import.meta.url).href;
  }
  // A reader that goes away (`| head`) ends the chat quietly, as it would any Unix filter.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  const { main, mcpMain, signerMain } = await import(entry);
  // `mcp`: the stdio MCP bridge to a running service's /mcp (docs/mcp.md); `signer`: a key for
  // SIGNERS_FILE (docs/deploy.md#going-live); anything else: the chat.
  const [command, ...rest] = process.argv.slice(2);
  const commands = { mcp: mcpMain, signer: signerMain };
  const run = Object.hasOwn(commands, command ?? "")
    ? (io) => commands[command](rest, io)
    : (io) => main(process.argv.slice(2), io);
  process.exitCode = await run({
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
}
