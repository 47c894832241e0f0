/**
 * "Each file funds its own wallets": the wallets a test file pays from (every funded wallet but
 * the merchant's and the facilitator's) are replaced, in the file's view of the shared devnet, by
 * fresh keys made for that file and funded from the devnet's faucet (`POST /__devnet/fund`) with
 * the manifest's starting balances. A service booted on that view holds the fresh keys, so no file
 * depends on balances, nonces or authorizations another file left behind.
 */
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { SharedDevnet } from "./shared-devnet.js";

/** Roles whose wallets a file gets fresh keys for. */
const OWN_ROLES = new Set(["payer", "payer-low", "user"]);

/** PKCS#8 prefix of a raw 32-byte ed25519 seed (RFC 8410). */
const ED25519_PKCS8 = Buffer.from("302e020100300506032b657004220420", "hex");

/** A 64-byte Solana secret key (seed, then public key) and its base58 address. */
function solanaKey(): { secretKey: number[]; address: string } {
  const seed = randomBytes(32);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(key).export({ format: "jwk" });
  const publicKey = Buffer.from(String(jwk.x), "base64url");
  return { secretKey: [...seed, ...publicKey], address: getBase58Decoder().decode(publicKey) };
}

export interface OwnWallets {
  /** The shared devnet with this file's wallets in place of the shared ones. */
  shared: SharedDevnet;
  /** The body of `POST /__devnet/fund` that gives them their starting balances. */
  fund: {
    evm: Array<{ address: string; usdcAtomic: string }>;
    solana: Array<{ address: string; usdcAtomic: string }>;
  };
}

export function ownWallets(shared: SharedDevnet): OwnWallets {
  const fund: OwnWallets["fund"] = { evm: [], solana: [] };
  const evmSecrets = { ...shared.secrets.evm };
  const evmWallets = shared.manifest.evm.wallets.map((w) => {
    if (!OWN_ROLES.has(w.role)) return w;
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    evmSecrets[w.name] = key;
    fund.evm.push({ address, usdcAtomic: w.usdcAtomic });
    return { ...w, address };
  });
  const solanaSecrets = { ...shared.secrets.solana };
  const solana = shared.manifest.solana;
  const solanaWallets = solana?.wallets.map((w) => {
    if (!OWN_ROLES.has(w.role)) return w;
    const { secretKey, address } = solanaKey();
    solanaSecrets[w.name] = secretKey;
    fund.solana.push({ address, usdcAtomic: w.usdcAtomic });
    return { ...w, address };
  });
  return {
    shared: {
      manifest: {
        ...shared.manifest,
        evm: { ...shared.manifest.evm, wallets: evmWallets },
        solana: solana && solanaWallets ? { ...solana, wallets: solanaWallets } : solana,
      },
      secrets: { evm: evmSecrets, solana: solanaSecrets },
    },
    fund,
  };
}
