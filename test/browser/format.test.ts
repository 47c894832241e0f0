/**
 * The web page's pure formatting (web/src/format.ts): explorer links for public networks only (the
 * devnet's transactions exist on this machine), network names, USD amounts as people read them.
 */
import { describe, expect, it } from "vitest";
import { PAYMENT_STATUSES } from "../../src/protocol/index.js";
import {
  explorerTxUrl,
  networkName,
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

describe("networkName", () => {
  it("names public networks, and the embedded devnet's as local whatever their id", () => {
    expect(networkName("eip155:8453")).toBe("Base");
    expect(networkName("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")).toBe("Solana devnet");
    expect(networkName("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", true)).toBe("Local Solana devnet");
    expect(networkName("eip155:31337", true)).toBe("Local EVM devnet");
    expect(networkName("eip155:999999")).toBe("eip155:999999");
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
