import { randomBytes } from "node:crypto";
import type { ServerContext } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { approvalStateCodec, declaresUrlElicitation } from "./input-required.js";

/** The sealed `requestState` of a 2026-07-28 approval (docs/mcp.md, "Approvals"). */
const ctx = (method = "tools/call", envelope?: Record<string, unknown>) =>
  ({ mcpReq: { method, ...(envelope ? { envelope } : {}) } }) as unknown as ServerContext;

describe("approval request state", () => {
  const key = randomBytes(32);
  const alice = approvalStateCodec(key, "alice\u00000xaaa");
  const paymentId = "pay_00000000-0000-4000-8000-000000000001";

  it("opens what it sealed, for the same caller and method", async () => {
    const state = await alice.mint({ paymentId }, ctx());
    expect(state).not.toContain(paymentId); // sealed, not readable as is
    await expect(alice.verify(state, ctx())).resolves.toEqual({ paymentId });
  });

  it("refuses an altered state, another caller's or wallet's, another method's, another key's", async () => {
    const state = await alice.mint({ paymentId }, ctx());
    // One character in the middle changed (the last ones may carry only padding bits).
    const at = Math.floor(state.length / 2);
    const flipped = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
    expect(flipped).not.toBe(state);
    await expect(alice.verify(flipped, ctx())).rejects.toThrow();
    await expect(approvalStateCodec(key, "bob\u00000xaaa").verify(state, ctx())).rejects.toThrow();
    await expect(approvalStateCodec(key, "alice\u00000xbbb").verify(state, ctx())).rejects.toThrow();
    await expect(alice.verify(state, ctx("prompts/get"))).rejects.toThrow();
    await expect(
      approvalStateCodec(randomBytes(32), "alice\u00000xaaa").verify(state, ctx()),
    ).rejects.toThrow();
  });

  it("reads URL elicitation from the request's own envelope", () => {
    const caps = (c: unknown) => ctx("tools/call", { "io.modelcontextprotocol/clientCapabilities": c });
    expect(declaresUrlElicitation(caps({ elicitation: { url: {} } }))).toBe(true);
    expect(declaresUrlElicitation(caps({ elicitation: { form: {} } }))).toBe(false);
    expect(declaresUrlElicitation(ctx())).toBe(false);
  });
});
