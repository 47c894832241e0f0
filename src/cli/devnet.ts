import { readFileSync } from "node:fs";
import { UsageError } from "./errors.js";

/**
 * `--devnet`: the embedded devnet's manifest (`npm start` writes it) gives the service's URL, the
 * dev token and a wallet by role; a word after `--devnet` that reads as a mistyped role is refused.
 */

interface DevnetManifest {
  devToken: string;
  chatUrl?: string;
  evm: { wallets: Array<{ address: string; role: string }> };
}

/** The devnet wallet roles the terminal can pay from (the server signs for the payer ones). */
export const DEVNET_ROLES = ["payer", "payer-low", "user"] as const;

/** Optimal string alignment distance (an adjacent swap counts one), for telling typos of roles. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  return at(a.length, b.length);
}

/**
 * Whether a word after `--devnet` reads as a mistyped role ("usr", "payr", "pay", "User") rather
 * than the start of a question: one word, close to a role name or a piece of one.
 */
export function looksLikeRole(word: string): boolean {
  const w = word.toLowerCase();
  if (!/^[a-z][a-z_-]{1,15}$/.test(w)) return false;
  return DEVNET_ROLES.some(
    (role) =>
      distance(w, role) <= (role.length <= 4 ? 1 : 2) ||
      (w.length >= 3 && role.startsWith(w)) ||
      (w.length >= 3 && w.startsWith(role)),
  );
}

export const ROLE_LIST = DEVNET_ROLES.join(", ");

/** URL, token and wallet of the embedded devnet's manifest (`npm start` writes it). */
export function devnetIdentity(
  role: string,
  env: NodeJS.ProcessEnv,
): { token: string; wallet: string; url: string | undefined } {
  if (!(DEVNET_ROLES as readonly string[]).includes(role))
    throw new UsageError(`--devnet=${role}: not a role; the roles: ${ROLE_LIST}`);
  const path = env.DEVNET_MANIFEST ?? ".data/devnet/manifest.json";
  let manifest: DevnetManifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as DevnetManifest;
  } catch {
    throw new UsageError(`--devnet: cannot read the devnet manifest at ${path} (is the service running?)`);
  }
  const wallets = Array.isArray(manifest?.evm?.wallets) ? manifest.evm.wallets : [];
  const wallet = wallets.find((w) => w.role === role);
  if (!wallet) {
    const roles = [...new Set(wallets.map((w) => w.role))].join(", ") || "none";
    throw new UsageError(`--devnet: the manifest at ${path} has no ${role} wallet (its roles: ${roles})`);
  }
  const url = typeof manifest.chatUrl === "string" ? manifest.chatUrl : undefined;
  return { token: manifest.devToken, wallet: wallet.address, url };
}
