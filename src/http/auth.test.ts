import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppError } from "../errors/index.js";
import type { KeyLookup } from "../operator/index.js";
import type { KeyGrant } from "../payments/index.js";
import { type Authenticate, authenticate } from "./auth.js";

/**
 * Whose a bearer token is: an operator key's token is the key's wherever else it is listed (a
 * SIGNERS_FILE entry binding it to a server key puts it among the known tokens too), so the key's
 * caps, revocation and pause always apply; other tokens are the identities they are listed as.
 */
const KEY_TOKEN = `x4c_${"k".repeat(43)}`;
const grant: KeyGrant = { name: "ci", daily: 50_000n };

function app(key: KeyLookup) {
  const deps: Authenticate = {
    // As bootstrap lists a SIGNERS_FILE token: the key's token is bound to a server key too.
    authTokens: new Map([
      [KEY_TOKEN, "signer-1"],
      ["alice-token-0123456789", "alice"],
    ]),
    requireAuth: true,
    keys: { lookup: (token) => (token === KEY_TOKEN ? key : { kind: "none" }) },
  };
  const hono = new Hono();
  hono.get("/", async (c) => {
    try {
      const who = await authenticate(c, deps, "chat");
      return c.json({ caller: who.caller ?? null, capped: who.grant !== undefined });
    } catch (error) {
      return c.json({ code: (error as AppError).code }, 401);
    }
  });
  return async (token: string) =>
    (await hono.request("/", { headers: { Authorization: `Bearer ${token}` } })).json();
}

describe("authenticate", () => {
  it("a key's token listed among the known tokens is still the key's: its grant applies", async () => {
    const ask = app({ kind: "active", name: "ci", scopes: ["chat"], grant });
    expect(await ask(KEY_TOKEN)).toEqual({ caller: "ci", capped: true });
    expect(await ask("alice-token-0123456789")).toEqual({ caller: "alice", capped: false });
  });

  it("a revoked, expired or rotated-away key's token is refused, though a server key's entry lists it", async () => {
    expect(await app({ kind: "revoked", name: "ci" })(KEY_TOKEN)).toEqual({ code: "unauthorized" });
    expect(await app({ kind: "expired", name: "ci" })(KEY_TOKEN)).toEqual({ code: "unauthorized" });
    // Not signer-1 with none of the key's caps or pause: the token the key had before a rotation.
    expect(await app({ kind: "rotated", name: "ci" })(KEY_TOKEN)).toEqual({ code: "unauthorized" });
  });
});
