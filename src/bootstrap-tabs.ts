import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "./config/index.js";
import { facilitatorSettler, type TabsOptions } from "./payments/index.js";
import type { Store } from "./store/index.js";

/** How long the wallet has to sign a tab's funding (its EIP-3009 window). */
const SIGN_WINDOW_S = 300;

/**
 * Tabs' wiring (docs/payments.md#tabs): on when the store can hold them (PostgreSQL or PGlite), a
 * facilitator settles their transfers (TAB_FACILITATOR_URL, or the embedded devnet's) and a secret
 * derives their session keys. The secret is TAB_SECRET, else `<DATA_DIR>/tab-secret` made once
 * (owner-only): a PostgreSQL server shared by several instances needs TAB_SECRET, the same on all,
 * or a tab opened on one could not be paid from or returned by another; without it tabs stay off.
 */
export async function tabsOptions(
  config: Config,
  store: Store,
  devnetFacilitator: string | undefined,
): Promise<{ payments: { tabs?: TabsOptions }; banner: string }> {
  const t = config.payments.tabs;
  const url = t.facilitatorUrl ?? devnetFacilitator;
  if (!store.tabs) return { payments: {}, banner: "Tabs: off (they need PostgreSQL or PGlite)." };
  if (!url) return { payments: {}, banner: "Tabs: off (set TAB_FACILITATOR_URL to settle their transfers)." };
  let secret: Uint8Array | undefined;
  if (t.secret) secret = Buffer.from(t.secret, "hex");
  else if (store.kind === "pglite") secret = await secretFile(config.payments.dataDir);
  if (!secret) return { payments: {}, banner: "Tabs: off (set TAB_SECRET, the same on every instance)." };
  return {
    payments: {
      tabs: {
        store: store.tabs,
        config: {
          secret,
          settler: facilitatorSettler(url, config.payments.serviceTimeoutMs),
          maxAmount: t.maxAmount,
          defaultSeconds: t.defaultSeconds,
          maxSeconds: t.maxSeconds,
          signWindowSeconds: SIGN_WINDOW_S,
          publicUrl: config.publicUrl,
        },
      },
    },
    banner: `Tabs: on (settled by ${new URL(url).origin}).`,
  };
}

/** `<dataDir>/tab-secret`, made once; in memory only with DATA_DIR=memory:// (tests). */
async function secretFile(dataDir: string): Promise<Uint8Array> {
  if (dataDir === "memory://") return randomBytes(32);
  const path = join(dataDir, "tab-secret");
  const existing = await readFile(path, "utf8").catch(() => undefined);
  if (existing && /^[0-9a-f]{64}$/.test(existing.trim())) return Buffer.from(existing.trim(), "hex");
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32);
  const fresh = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(fresh, `${secret.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    // Never over a secret another process wrote meanwhile: its tabs' keys come from it.
    const again = await readFile(path, "utf8").catch(() => undefined);
    if (again && /^[0-9a-f]{64}$/.test(again.trim())) return Buffer.from(again.trim(), "hex");
    await rename(fresh, path);
  } finally {
    await rm(fresh, { force: true });
  }
  return secret;
}
