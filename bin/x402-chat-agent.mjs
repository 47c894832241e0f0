#!/usr/bin/env node
/**
 * `x402-chat-agent` (package.json `bin`; `npx x402-chat-agent chat` from a checkout, `npm run
 * chat`; `npx x402-chat-agent mcp`, the stdio MCP bridge; `npx x402-chat-agent signer new`, a key for
 * SIGNERS_FILE). Runs the terminal chat compiled into dist/cli/main.js (scripts/build-client.mjs), built
 * first when it is missing or a source changed, so it is never stale; should the build fail, it
 * runs the TypeScript source through tsx.
 */
import { pathToFileURL } from "node:url";

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
