import { describe, expect, it } from "vitest";
import { Activity, countingFetch } from "./activity.js";
import { createControlApp } from "./control.js";
import { type FundRequest, parseFundRequest } from "./faucet.js";
import { FaultSwitch } from "./faults.js";
import type { DevnetManifest } from "./types.js";

const EVM = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const SOLANA = "Fye9P7txA7wEoDmRRftrFvLYwKjM61pPrGKpX36ZAYMj";

describe("parseFundRequest", () => {
  it("reads wallets of both chains with their amounts as bigints", () => {
    expect(
      parseFundRequest({
        evm: [{ address: EVM, usdcAtomic: "1000" }],
        solana: [{ address: SOLANA, usdcAtomic: "0" }],
      }),
    ).toEqual({ evm: [{ address: EVM, usdcAtomic: 1000n }], solana: [{ address: SOLANA, usdcAtomic: 0n }] });
    expect(parseFundRequest({})).toEqual({ evm: [], solana: [] });
  });

  it.each([
    ["not an object", [], /object/],
    ["an unknown field", { base: [] }, /unknown field/],
    ["a chain that is not a list", { evm: {} }, /array/],
    ["a bad EVM address", { evm: [{ address: "0x1234", usdcAtomic: "1" }] }, /EVM address/],
    ["a bad Solana address", { solana: [{ address: "0OIl", usdcAtomic: "1" }] }, /Solana address/],
    ["a number amount", { evm: [{ address: EVM, usdcAtomic: 1 }] }, /decimal string/],
    ["a negative amount", { evm: [{ address: EVM, usdcAtomic: "-1" }] }, /decimal string/],
    ["too much", { evm: [{ address: EVM, usdcAtomic: "1000000000001" }] }, /at most/],
    ["too many wallets", { evm: Array(33).fill({ address: EVM, usdcAtomic: "1" }) }, /at most 32/],
  ])("refuses %s", (_what, body, message) => {
    expect(() => parseFundRequest(body)).toThrow(message);
  });
});

describe("Activity", () => {
  it("counts a request until it is done, once", () => {
    const activity = new Activity();
    const done = activity.begin("settling");
    activity.begin("verifying")();
    expect(activity.snapshot()).toEqual({ verifying: 0, settling: 1, serving: 0 });
    done();
    done();
    expect(activity.snapshot()).toEqual({ verifying: 0, settling: 0, serving: 0 });
  });
});

describe("countingFetch", () => {
  it("counts the facilitator's /verify and /settle until answered, or every request as the kind given", async () => {
    const activity = new Activity();
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const app = async () => {
      await held;
      return new Response("ok");
    };
    const facilitator = countingFetch(app, activity);
    const service = countingFetch(app, activity, "serving");
    const pending = [
      facilitator(new Request("http://f/settle", { method: "POST" })),
      facilitator(new Request("http://f/verify", { method: "POST" })),
      facilitator(new Request("http://f/supported")),
      service(new Request("http://s/weather?city=Paris")),
    ];
    expect(activity.snapshot()).toEqual({ verifying: 1, settling: 1, serving: 1 });
    answer();
    await Promise.all(pending);
    expect(activity.snapshot()).toEqual({ verifying: 0, settling: 0, serving: 0 });
  });
});

describe("the control server's faucet and activity", () => {
  const token = "t".repeat(64);
  const funded: FundRequest[] = [];
  const app = createControlApp(new FaultSwitch(), token, () => ({}) as DevnetManifest, {
    fund: async (request) => {
      if (request.solana.length) throw new Error("Solana is not running");
      funded.push(request);
    },
    activity: () => ({ verifying: 1, settling: 2, serving: 3 }),
  });
  const post = (body: unknown, auth = token) =>
    app.request("/__devnet/fund", {
      method: "POST",
      headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("funds what a valid body asks for, and says how many wallets", async () => {
    const response = await post({ evm: [{ address: EVM, usdcAtomic: "5" }] });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ funded: 1 });
    expect(funded.at(-1)).toEqual({ evm: [{ address: EVM, usdcAtomic: 5n }], solana: [] });
  });

  it("refuses a bad body (400), a wrong token (401) and what it cannot fund (409)", async () => {
    const before = funded.length;
    expect((await post("{")).status).toBe(400);
    expect((await post({ evm: [{ address: "x", usdcAtomic: "1" }] })).status).toBe(400);
    expect((await post({}, "wrong")).status).toBe(401);
    expect((await post({ solana: [{ address: SOLANA, usdcAtomic: "1" }] })).status).toBe(409);
    expect(funded.length).toBe(before);
  });

  it("reports the facilitator's activity", async () => {
    const response = await app.request("/__devnet/activity", {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await response.json()).toEqual({ verifying: 1, settling: 2, serving: 3 });
  });
});
