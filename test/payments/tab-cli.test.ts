/**
 * docs/clients.md#terminal-chat: `chat --key-file user.key --tab 0.05` as a user runs it against the
 * service on the devnet (a loopback port, the terminal chat's main() with in-memory streams): the
 * key file signs the tab's funding once, three asks are paid from it with no approval asked, and
 * at exit the tab closes and returns exactly what was not spent. Ledger = chain.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { evmUsdcBalance } from "../../src/devnet/testing/index.js";
import { closeServer, listen } from "../../src/service.js";
import { memoryIo } from "../client/support.js";
import { scratchDir } from "../helpers.js";
import { type Booted, boot, priceOf, useTestDevnet, WEATHER_PARIS } from "./harness.js";
import { ALICE, TAB_ENV, userAccount } from "./tab-helpers.js";

const devnet = useTestDevnet();
let b: Booted;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  b = await boot(devnet, { store: "pglite", env: TAB_ENV });
  server = await listen(b.running.service.app, { host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  if (server) await closeServer(server.server);
  await b?.close();
});

it("--tab: one signature, three asks paid from the tab without asking, the rest back at exit", async () => {
  const user = userAccount(devnet);
  const key = devnet.secrets.evm.user;
  const keyFile = join(scratchDir("tab-cli"), "user.key");
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  const price = priceOf(devnet, "weather");
  const before = await evmUsdcBalance(devnet, user.address);
  // Interactive, fed by a pipe: "y" opens the tab, three questions, then the input ends (exit).
  const input = `y\n${WEATHER_PARIS}\n${WEATHER_PARIS}\n${WEATHER_PARIS}\n`;
  const terminal = memoryIo({}, input);
  terminal.stdin.end();
  const args = ["chat", "--url", server.url, "--token", ALICE, "--key-file", keyFile, "--tab", "0.05"];
  const code = await main(args, terminal.io);
  const err = terminal.err();
  expect(code).toBe(0);
  expect(err).toMatch(/Open a tab of \$0\.05 with .* on Local EVM devnet/);
  expect(err).toMatch(/Tab tab_[0-9a-f]{24} open: \$0\.05/);
  // Paid from the tab: never an approval asked.
  expect(err).not.toMatch(/Approve .* \[y\/N\]/i);
  expect(err.match(/settled, tx 0x[0-9a-f]{64}.*from your tab/g)).toHaveLength(3);
  const spent = price * 3n;
  const back = 50_000n - spent;
  expect(err).toContain(
    `closed: $${(Number(spent) / 1e6).toFixed(2)} spent, $${(Number(back) / 1e6).toFixed(2)} returned`,
  );
  // Ledger = chain: the wallet is down by exactly what the three asks cost.
  expect(before - (await evmUsdcBalance(devnet, user.address))).toBe(spent);
});
