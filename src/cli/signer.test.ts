import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../../test/helpers.js";
import { readSignersFile } from "../payments/index.js";
import { EXIT } from "./exit.js";
import { type SignersEntry, signerMain } from "./signer.js";

/**
 * `x402-chat-agent signer new` (docs/deploy.md#going-live): the file it writes is a SIGNERS_FILE
 * the service reads, mode 0600, never written over; what it prints names the wallet and the
 * environment's lines, never the key.
 */

async function run(argv: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  stderr.on("data", (chunk) => {
    err += String(chunk);
  });
  const code = await signerMain(argv, { stdout, stderr, env, ...(cwd ? { cwd } : {}) });
  return { code, out, err };
}

const entries = (path: string) => JSON.parse(readFileSync(path, "utf8")) as SignersEntry[];
const mode = (path: string) => statSync(path).mode & 0o777;
const TOKEN = "token-for-alice-0123456789";

describe("signer new", () => {
  it("writes a new EVM key the service reads, mode 0600, and prints its wallet, not the key", async () => {
    const dir = scratchDir("signer");
    const out = join(dir, "signers.json");
    const result = await run(["new", "--chain", "evm", "--out", out, "--token", "alice"], {
      AUTH_TOKENS: `alice=${TOKEN},bob=token-for-bob-0123456789`,
    });
    expect(result).toMatchObject({ code: EXIT.ok, err: "" });
    expect(mode(out)).toBe(0o600);
    const [entry] = entries(out);
    if (entry?.chain !== "evm") throw new Error("not an EVM entry");
    expect(entry.tokens).toEqual([TOKEN]);
    const address = privateKeyToAccount(entry.privateKey).address;
    expect(result.out).toContain(`Wallet: ${address}`);
    expect(result.out).toContain(`SIGNERS_FILE=${out}`);
    expect(result.out).toContain("PAYMENTS=external");
    expect(result.out).toContain("https://faucet.circle.com");
    expect(result.out.toLowerCase()).not.toContain(entry.privateKey.slice(2).toLowerCase());
    expect(result.out).not.toContain(TOKEN);
    expect(await readSignersFile(out)).toHaveLength(1);
  });

  it("writes a Solana keypair as solana-keygen does (64 bytes), its address printed", async () => {
    const dir = scratchDir("signer");
    const out = join(dir, "signers.json");
    const result = await run(["new", "--chain", "solana", "--out", out, "--token", "alice"], {
      AUTH_TOKENS: `alice=${TOKEN}`,
    });
    expect(result.code).toBe(EXIT.ok);
    const [entry] = entries(out);
    if (entry?.chain !== "solana") throw new Error("not a Solana entry");
    expect(entry.secretKey).toHaveLength(64);
    const signer = await createKeyPairSignerFromBytes(Uint8Array.from(entry.secretKey));
    expect(result.out).toContain(`Wallet: ${signer.address}`);
    expect(result.out).not.toContain(entry.secretKey.slice(0, 8).join(","));
    expect(await readSignersFile(out)).toHaveLength(1);
  });

  it("refuses to write over a file, and leaves it as it was", async () => {
    const dir = scratchDir("signer");
    const out = join(dir, "signers.json");
    writeFileSync(out, "[]\n");
    const result = await run(["new", "--chain", "evm", "--out", out, "--token", "alice"], {
      AUTH_TOKENS: `alice=${TOKEN}`,
    });
    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toMatch(/exists: not overwritten/);
    expect(readFileSync(out, "utf8")).toBe("[]\n");
  });

  it("--add adds a key to an existing signers file, keeping the others, mode 0600", async () => {
    const dir = scratchDir("signer");
    const out = join(dir, "signers.json");
    const env = { AUTH_TOKENS: `alice=${TOKEN}` };
    expect((await run(["new", "--chain", "evm", "--out", out, "--token", "alice"], env)).code).toBe(EXIT.ok);
    const first = entries(out)[0];
    expect(
      (await run(["new", "--chain", "solana", "--out", out, "--token", "alice", "--add"], env)).code,
    ).toBe(EXIT.ok);
    const both = entries(out);
    expect(both.map((e) => e.chain)).toEqual(["evm", "solana"]);
    expect(both[0]).toEqual(first);
    expect(mode(out)).toBe(0o600);
    expect(await readSignersFile(out)).toHaveLength(2);
  });

  it("reads AUTH_TOKENS from ./.env when the environment has none; an unknown name writes nothing", async () => {
    const dir = scratchDir("signer");
    writeFileSync(join(dir, ".env"), `AUTH_TOKENS=alice=${TOKEN}\n`);
    const ok = await run(["new", "--chain", "evm", "--out", "signers.json", "--token", "alice"], {}, dir);
    expect(ok.code).toBe(EXIT.ok);
    expect(entries(join(dir, "signers.json"))[0]?.tokens).toEqual([TOKEN]);

    const unknown = await run(["new", "--chain", "evm", "--out", "other.json", "--token", "carol"], {}, dir);
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.err).toMatch(/--token carol: no such name in AUTH_TOKENS/);
    expect(() => statSync(join(dir, "other.json"))).toThrow();
  });

  it("without --token makes a new token, printed once as an AUTH_TOKENS entry", async () => {
    const dir = scratchDir("signer");
    const out = join(dir, "signers.json");
    const result = await run(["new", "--chain", "evm", "--out", out]);
    expect(result.code).toBe(EXIT.ok);
    const [token] = entries(out)[0]?.tokens ?? [];
    expect(token?.length).toBeGreaterThanOrEqual(16);
    expect(result.out).toMatch(new RegExp(`\\n {2}signer-[0-9a-f]{6}=${token}\\n`));
  });

  it("answers usage mistakes with exit code 2 and one line", async () => {
    const dir = scratchDir("signer");
    for (const argv of [
      ["new", "--chain", "bitcoin", "--out", join(dir, "a.json")],
      ["new", "--chain", "evm"],
      ["rotate", "--chain", "evm", "--out", join(dir, "a.json")],
      ["new", "--chain", "evm", "--out", join(dir, "a.json"), "--force"],
    ]) {
      const result = await run(argv);
      expect(result.code, argv.join(" ")).toBe(EXIT.usage);
      expect(result.err.trim().split("\n"), argv.join(" ")).toHaveLength(1);
    }
    expect((await run(["--help"])).out).toContain("signer new --chain evm|solana --out FILE");
  });
});
