import { describe, expect, it } from "vitest";
import { createLogger } from "./index.js";

function capture(level?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    ...(level ? { level } : {}),
    destination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return { logger, lines };
}

describe("the logger", () => {
  it("writes one JSON object per line with level, time and message", () => {
    const { logger, lines } = capture();
    logger.info("listening", { url: "http://127.0.0.1:3000" });
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "listening",
        url: "http://127.0.0.1:3000",
        time: expect.any(String),
      }),
    ]);
  });

  it("keeps an error's type, stack and cause", () => {
    const { logger, lines } = capture();
    const cause = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    logger.error("store down", { err: new Error("query failed", { cause }) });
    const err = lines[0]?.err as { type: string; message: string; stack: string; cause?: { code?: string } };
    expect(err.type).toBe("Error");
    expect(err.stack).toContain("log.test.ts");
    expect(JSON.stringify(lines[0])).toContain("ECONNREFUSED");
  });

  it("redacts secret fields by path and masks secrets in error text", () => {
    const { logger, lines } = capture();
    const key = `0x${"ab".repeat(32)}`;
    logger.warn("request", {
      authorization: "Bearer sekrit-token-123456",
      signer: { privateKey: key, address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
      headers: { "payment-signature": "eyJzaWduYXR1cmUiOiIweGFi" },
      err: new Error(`privateKey: ${key} sent with Bearer sekrit-token-123456`),
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("sekrit");
    expect(text).not.toContain("ab".repeat(32));
    expect(text).not.toContain("eyJzaWduYXR1cmUiOiIweGFi");
    expect(text).toContain("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  });

  // Found by a review: a header spelt as it arrives (capitals) passed the paths unredacted.
  it("redacts a secret field however its name is capitalised, and masks text deep in an error", () => {
    const { logger, lines } = capture();
    const err = Object.assign(new Error("failed"), {
      list: [{ x: [{ y: [{ z: "Bearer sekrit-deep-123456" }] }] }],
    });
    logger.warn("request", {
      Authorization: "Basic c2Vrcml0LWJhc2ljLXBhc3M=",
      headers: { "PAYMENT-SIGNATURE": "eyJzZWtyaXQiOjF9", "X-Tab-Token": "sekrit-tab" },
      err,
    });
    const text = JSON.stringify(lines);
    for (const secret of ["c2Vrcml0", "eyJzZWtyaXQiOjF9", "sekrit-tab", "sekrit-deep"])
      expect(text).not.toContain(secret);
  });

  it("redacts tabs' and wallet sessions' tokens, as fields and in text", () => {
    const { logger, lines } = capture();
    const tab = `x4t_${"Q".repeat(43)}`;
    const session = `x4w_${"R".repeat(43)}`;
    logger.warn("tab request", {
      tab,
      body: { tab },
      err: new Error(`no tab for ${tab} (session ${session})`),
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain("Q".repeat(43));
    expect(text).not.toContain("R".repeat(43));
  });

  // Found by a black-box run: viem's error for an unreachable RPC_URLS entry quoted its key.
  it("masks the keys in providers' URLs quoted by an error, keeping the host", () => {
    const { logger, lines } = capture();
    const urls = [
      "https://eth-mainnet.g.alchemy.com/v2/h5FAKEPROVIDERKEY1234567890abcd",
      "http://127.0.0.1:31056/v2/h5FAKEPROVIDERKEY123456/extra",
      "https://mainnet.helius-rpc.com/?api-key=0f4e2c1a-feed-4bad-beef-5ca1ab1e0000",
      "postgres://app:s3cretPassw0rd@db.internal:5432/ledger",
      "https://rpc.example.com/?token=abc123&chain=base",
    ];
    for (const url of urls) {
      const err = Object.assign(new Error(`HTTP request failed.\n\nURL: ${url}\nRequest body: {}`), { url });
      logger.warn("rpc down", { err });
    }
    const raw = JSON.stringify(lines);
    for (const secret of ["h5FAKEPROVIDERKEY", "0f4e2c1a-feed", "s3cretPassw0rd", "abc123"]) {
      expect(raw).not.toContain(secret);
    }
    for (const host of [
      "eth-mainnet.g.alchemy.com/v2/",
      "127.0.0.1:31056",
      "helius-rpc.com",
      "db.internal:5432",
    ]) {
      expect(raw).toContain(host);
    }
    expect(raw).toContain("chain=base");
  });

  // Found by a black-box run (h48): these reached the append-only audit trail in a quoted URL.
  it("masks passwords, sessions, codes and JWTs in URLs, and API keys' tokens in text", () => {
    const { logger, lines } = capture();
    const texts = [
      "http://svc.example/w?city=Zurich&password=PWSECRET4&passwd=PWSECRET5",
      "http://svc.example/w?jwt=JWTSECRET6&session=SESSIONSECRET&code=OAUTHCODE7",
      "http://svc.example/w?credential=CREDSECRET8",
      "login with eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl failed",
      "the key x4c_gbaten0XllsHoMP3beGiZ1vMkYYmZ5ORo9Qgx_ICxkE was used",
    ];
    for (const text of texts) logger.warn("refused", { err: new Error(text) });
    const raw = JSON.stringify(lines);
    for (const secret of [
      "PWSECRET",
      "JWTSECRET",
      "SESSIONSECRET",
      "OAUTHCODE",
      "CREDSECRET",
      "eyJhbGci",
      "gbaten0X",
    ]) {
      expect(raw).not.toContain(secret);
    }
    for (const kept of ["city=Zurich", "svc.example/w?"]) expect(raw).toContain(kept);
  });

  it("writes the process id exactly once per line, also when a caller passes it again", () => {
    const raw: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => raw.push(line) } });
    logger.info("starting", { pid: process.pid });
    logger.warn("plain");
    expect(raw).toHaveLength(2);
    // The raw text: JSON.parse would keep one of two duplicate keys and hide the second.
    for (const line of raw) expect(line.match(/"pid":/g)).toHaveLength(1);
    expect(JSON.parse(raw[0] ?? "")).toMatchObject({ pid: process.pid, msg: "starting" });
  });

  it("honours the level", () => {
    const { logger, lines } = capture("warn");
    logger.info("quiet");
    logger.warn("loud");
    expect(lines.map((l) => l.msg)).toEqual(["loud"]);
  });
});
