import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { open, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parseArgs, parseEnv } from "node:util";
import { createKeyPairSignerFromBytes } from "@solana/kit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { UsageError } from "./errors.js";
import { EXIT } from "./exit.js";

/**
 * `x402-chat-agent signer new`: a new server-held key in a signers file (`SIGNERS_FILE`,
 * docs/deploy.md#going-live), written with mode 0600 and never over an existing file (`--add`
 * adds the key to one). It prints the wallet's address and the lines the service's environment
 * needs; the key itself is never printed.
 */

export const SIGNER_USAGE = `x402-chat-agent signer new: a new key for the service's SIGNERS_FILE

  x402-chat-agent signer new --chain evm|solana --out FILE [--token NAME]... [--add]

Options:
  --chain evm|solana   the key's chain family (EVM: Base, Ethereum...; Solana)
  --out FILE           the signers file to write (mode 0600); refused if it exists, unless --add
  --add                add the key to the existing signers FILE (kept 0600)
  --token NAME         the key pays only for requests bearing this AUTH_TOKENS entry's token
                       (AUTH_TOKENS from the environment, else ./.env); repeat for more.
                       Without it, a new token is made and printed once, to add to AUTH_TOKENS
`;

export interface SignerIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Where a relative --out and ./.env are read from (default: the process's). */
  cwd?: string;
}

export interface SignerOptions {
  chain: "evm" | "solana";
  out: string;
  add: boolean;
  tokenNames: string[];
}

/** One SIGNERS_FILE entry, in the format src/payments `readSignersFile` reads. */
export type SignersEntry =
  | { chain: "evm"; privateKey: `0x${string}`; tokens: string[] }
  | { chain: "solana"; secretKey: number[]; tokens: string[] };

export function parseSignerArgs(argv: string[]): SignerOptions | "help" {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      chain: { type: "string" },
      out: { type: "string" },
      add: { type: "boolean", default: false },
      token: { type: "string", multiple: true },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help || positionals.length === 0) return "help";
  if (positionals.length !== 1 || positionals[0] !== "new")
    throw new UsageError(`unknown signer command ${JSON.stringify(positionals.join(" "))} (only "new")`);
  if (values.chain !== "evm" && values.chain !== "solana")
    throw new UsageError("--chain must be evm or solana");
  if (!values.out) throw new UsageError("--out FILE is required");
  return { chain: values.chain, out: values.out, add: values.add, tokenNames: values.token ?? [] };
}

/** A new key of the family, and its wallet's address. */
export async function newKey(chain: "evm" | "solana"): Promise<{ address: string; entry: SignersEntry }> {
  if (chain === "evm") {
    const privateKey = generatePrivateKey();
    return { address: privateKeyToAccount(privateKey).address, entry: { chain, privateKey, tokens: [] } };
  }
  // solana-keygen's 64 bytes: the ed25519 seed, then the public key.
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d ?? "", "base64url");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x ?? "", "base64url");
  const bytes = Uint8Array.from([...seed, ...pub]);
  const signer = await createKeyPairSignerFromBytes(bytes);
  return { address: signer.address, entry: { chain, secretKey: [...bytes], tokens: [] } };
}

/** AUTH_TOKENS (`name=token,...`) from the environment, else from `.env` in `cwd`. */
function authTokens(env: NodeJS.ProcessEnv, cwd: string): Map<string, string> {
  let raw = env.AUTH_TOKENS;
  const dotEnv = join(cwd, ".env");
  if (raw === undefined && existsSync(dotEnv)) raw = parseEnv(readFileSync(dotEnv, "utf8")).AUTH_TOKENS;
  const byName = new Map<string, string>();
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at > 0) byName.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  return byName;
}

/** The tokens the key pays for: the named AUTH_TOKENS entries', or a new one (printed once). */
function tokensFor(
  options: SignerOptions,
  io: SignerIo,
  cwd: string,
): { tokens: string[]; created?: { name: string; token: string } } {
  if (options.tokenNames.length === 0) {
    const name = `signer-${randomBytes(3).toString("hex")}`;
    const token = randomBytes(24).toString("base64url");
    return { tokens: [token], created: { name, token } };
  }
  const known = authTokens(io.env, cwd);
  const tokens = options.tokenNames.map((name) => {
    const token = known.get(name);
    if (!token) throw new UsageError(`--token ${name}: no such name in AUTH_TOKENS (environment or ./.env)`);
    if (token.length < 16) throw new UsageError(`--token ${name}: its token is shorter than 16 characters`);
    return token;
  });
  return { tokens };
}

/** Write `text` to `path` with mode 0600, failing if it exists. */
async function writeNew(path: string, text: string): Promise<void> {
  const file = await open(path, "wx", 0o600);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** The entries of an existing signers file (to add to); a UsageError names what is wrong, never a key. */
async function readEntries(path: string): Promise<unknown[]> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--add: cannot read ${path} as JSON${code ? ` (${code})` : ""}`);
  }
  if (!Array.isArray(json)) throw new UsageError(`--add: ${path} is not a signers file (a JSON array)`);
  return json;
}

/** Write the key: a new file, or the existing one with the key added (replaced whole, 0600). */
async function save(path: string, entry: SignersEntry, add: boolean): Promise<void> {
  if (!add) {
    try {
      await writeNew(path, `${JSON.stringify([entry], null, 2)}\n`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        throw new UsageError(`${path} exists: not overwritten (--add adds the key to it)`);
      throw error;
    }
    return;
  }
  const entries = await readEntries(path);
  const temporary = join(dirname(path), `.${randomBytes(6).toString("hex")}.signers.tmp`);
  try {
    await writeNew(temporary, `${JSON.stringify([...entries, entry], null, 2)}\n`);
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

const FAUCET = "https://faucet.circle.com";

export async function signerMain(argv: string[], io: SignerIo): Promise<number> {
  let options: SignerOptions | "help";
  const cwd = io.cwd ?? process.cwd();
  try {
    options = parseSignerArgs(argv);
    if (options === "help") {
      io.stdout.write(SIGNER_USAGE);
      return EXIT.ok;
    }
    const path = resolve(cwd, options.out);
    if (!options.add && existsSync(path))
      throw new UsageError(`${options.out} exists: not overwritten (--add adds the key to it)`);
    const { tokens, created } = tokensFor(options, io, cwd);
    const { address, entry } = await newKey(options.chain);
    entry.tokens = tokens;
    await save(path, entry, options.add);
    const testnet = options.chain === "evm" ? "Base Sepolia" : "Solana devnet";
    const lines = [
      `${options.add ? "Added" : "Wrote"} a new ${options.chain} key to ${path} (mode 0600; the key is not shown).`,
      `Wallet: ${address}`,
      `On ${testnet}, fund it with test USDC from ${FAUCET}`,
      created
        ? `It pays only for requests bearing the new token ${created.name} (shown once):`
        : `It pays only for requests bearing the token of ${options.tokenNames.join(", ")}.`,
      ...(created
        ? [
            `  ${created.name}=${created.token}`,
            "Add that entry to AUTH_TOKENS (comma-separated with any others), and give the token to that caller.",
          ]
        : []),
      "The service's environment (docs/deploy.md#going-live):",
      `  PAYMENTS=external`,
      `  SIGNERS_FILE=${path}`,
    ];
    io.stdout.write(`${lines.join("\n")}\n`);
    return EXIT.ok;
  } catch (error) {
    // parseArgs refuses unknown or malformed options with codes ERR_PARSE_ARGS_*.
    const code = (error as { code?: unknown }).code;
    const usage =
      error instanceof UsageError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"));
    io.stderr.write(`x402-chat-agent signer: ${error instanceof Error ? error.message : String(error)}\n`);
    return usage ? EXIT.usage : EXIT.error;
  }
}
