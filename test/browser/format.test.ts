/**
 * The web page's pure formatting (web/src/format.ts): explorer links for public networks only (the
 * devnet's transactions exist on this machine), network names, USD amounts as people read them.
 */
import { describe, expect, it } from "vitest";
import { ChatHttpError } from "../../src/client/index.js";
import { PAYMENT_STATUSES } from "../../src/protocol/index.js";
import { describeError } from "../../web/src/chat/transport.js";
import {
  explorerTxUrl,
  hostOf,
  localTime,
  networkName,
  readable,
  STATUS_LABELS,
  shortHash,
  statusTone,
  usd,
} from "../../web/src/format.js";

const EVM_TX = `0x${"ab".repeat(32)}`;
const SOL_TX = "5".repeat(88);

describe("explorerTxUrl", () => {
  it("links public EVM networks to their explorer", () => {
    expect(explorerTxUrl("eip155:8453", EVM_TX)).toBe(`https://basescan.org/tx/${EVM_TX}`);
    expect(explorerTxUrl("eip155:84532", EVM_TX)).toBe(`https://sepolia.basescan.org/tx/${EVM_TX}`);
    expect(explorerTxUrl("eip155:1", EVM_TX)).toBe(`https://etherscan.io/tx/${EVM_TX}`);
    expect(explorerTxUrl("eip155:137", EVM_TX)).toBe(`https://polygonscan.com/tx/${EVM_TX}`);
  });

  it("links Solana clusters to the Solana explorer with the cluster", () => {
    expect(explorerTxUrl("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", SOL_TX)).toBe(
      `https://explorer.solana.com/tx/${SOL_TX}`,
    );
    expect(explorerTxUrl("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", SOL_TX)).toBe(
      `https://explorer.solana.com/tx/${SOL_TX}?cluster=devnet`,
    );
  });

  it("has no link for local or unknown networks", () => {
    expect(explorerTxUrl("eip155:31337", EVM_TX)).toBeUndefined();
    expect(explorerTxUrl("solana:localgenesis", SOL_TX)).toBeUndefined();
    expect(explorerTxUrl(undefined, EVM_TX)).toBeUndefined();
  });
});

describe("hostOf", () => {
  it("is the URL's host: no user part, international names as xn--; else the text as given", () => {
    expect(hostOf("https://user@api.example.com:8443/weather?city=Paris")).toBe("api.example.com:8443");
    expect(hostOf("https://wéather.example/")).toBe("xn--wather-bva.example");
    expect(hostOf("not a url")).toBe("not a url");
  });
});

describe("networkName", () => {
  it("names public networks, and the embedded devnet's as local whatever their id", () => {
    expect(networkName("eip155:8453")).toBe("Base");
    expect(networkName("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")).toBe("Solana devnet");
    expect(networkName("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", true)).toBe("Local Solana devnet");
    expect(networkName("eip155:31337", true)).toBe("Local EVM devnet");
    expect(networkName("eip155:999999")).toBe("eip155:999999");
  });
});

describe("readable", () => {
  const local = new Set(["eip155:31337", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"]);
  const now = new Date("2026-11-28T09:57:00.000Z");
  const clock = (iso: string) => new Date(iso).toLocaleTimeString();

  it("names networks as the cards do: the devnet's as local, public ones by name, unknown ids as given", () => {
    expect(readable("Paid $0.01 on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1.", local, now)).toBe(
      "Paid $0.01 on Local Solana devnet.",
    );
    expect(readable("costs $0.01 on eip155:31337; on eip155:8453", local, now)).toBe(
      "costs $0.01 on Local EVM devnet; on Base",
    );
    expect(readable("on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", new Set(), now)).toBe("on Solana devnet");
    expect(readable("on eip155:999999", local, now)).toBe("on eip155:999999");
  });

  it("reads the service's public names of the devnet's networks as local too, once", () => {
    expect(readable("Weather costs $0.01 on Local EVM devnet or Solana devnet.", local, now)).toBe(
      "Weather costs $0.01 on Local EVM devnet or Local Solana devnet.",
    );
    expect(readable("on Local Solana devnet", local, now)).toBe("on Local Solana devnet");
    expect(readable("on Solana devnet", new Set(), now)).toBe("on Solana devnet");
  });

  it("points to the Payments view where the service names the API path an API client reads", () => {
    const said = "Do not pay again; its final state is at GET /api/payments/pay_8f2c-41.";
    expect(readable(said, local, now)).toBe(
      "Do not pay again; its final state will show under Payments (top bar).",
    );
  });

  it("gives ISO and UTC times as local times of day", () => {
    expect(readable("before 2026-11-28T09:57:33.000Z.", local, now)).toBe(
      `before ${clock("2026-11-28T09:57:33.000Z")}.`,
    );
    expect(readable("before 09:57:33 UTC.", local, now)).toBe(`before ${clock("2026-11-28T09:57:33.000Z")}.`);
    // Just past midnight UTC, an end a minute before midnight was yesterday's.
    const late = new Date("2026-11-29T00:00:30.000Z");
    expect(readable("before 23:59:50 UTC", local, late)).toBe(
      `before ${localTime("2026-11-28T23:59:50.000Z", late)}`,
    );
    expect(readable("on 2026-11-20T08:00:00Z", local, now)).toBe(
      `on ${localTime("2026-11-20T08:00:00Z", now)}`,
    );
    expect(localTime("2026-11-20T08:00:00Z", now)).toBe(new Date("2026-11-20T08:00:00Z").toLocaleString());
  });
});

describe("usd", () => {
  it("shows cents at least, and every digit beyond them the amount has", () => {
    expect(usd("0.01")).toBe("$0.01");
    expect(usd("2")).toBe("$2.00");
    expect(usd("1.5")).toBe("$1.50");
    expect(usd("1.500000")).toBe("$1.50");
    expect(usd("0.005")).toBe("$0.005");
    expect(usd("0.000001")).toBe("$0.000001");
    expect(usd("1234567.25")).toBe("$1,234,567.25");
    expect(usd(undefined)).toBe("");
  });
});

describe("statuses", () => {
  it("labels and colours every payment status of the protocol", () => {
    for (const status of PAYMENT_STATUSES) {
      expect(STATUS_LABELS[status], status).toBeTruthy();
      expect(["neutral", "progress", "ok", "bad", "wait"], status).toContain(statusTone(status));
    }
  });

  it("shortens hashes around an ellipsis", () => {
    expect(shortHash(EVM_TX)).toBe("0xababab…ababab");
    expect(shortHash("short")).toBe("short");
  });
});

describe("describeError (the chat page's banner)", () => {
  const problem = (code: string, detail: string) => ({
    type: "about:blank",
    title: detail,
    status: 400,
    code,
    detail,
  });

  it("says what to do on this page where the service's sentence is for any client", () => {
    expect(
      describeError(new ChatHttpError(problem("no_wallet", "No wallet was given with this request."))),
    ).toBe(
      "No wallet was given with this request. (no_wallet) Connect a wallet with the button at the top right, then ask again.",
    );
    expect(describeError(new ChatHttpError(problem("invalid_json", "The body is not JSON.")))).toBe(
      "The body is not JSON. (invalid_json)",
    );
  });

  // Found by a black-box run (h52): offline, the page showed the browser's "Failed to fetch".
  it("says the service cannot be reached, not the browser's words, when a request never left", () => {
    for (const words of [
      "Failed to fetch",
      "NetworkError when attempting to fetch resource.",
      "Load failed",
    ]) {
      expect(describeError(new TypeError(words))).toBe(
        "The service cannot be reached. Check the connection, then try again.",
      );
    }
    expect(describeError(new Error("something else"))).toBe("something else");
  });
});
