/**
 * docs/audit.md: a real paid chat turn on the devnet, and a refused one, leave the records the
 * audit trail promises (who, which request, the limits in force, a hash of what was signed), the
 * chain holds, and nothing secret is in the export: not the bearer token, not the devnet's keys,
 * not the payment's signature (any 32-byte word of the settling transaction's calldata) nor its
 * header. On PostgreSQL, a record changed by hand makes `audit verify` (the CLI's handler, straight
 * on the store) fail naming it.
 */
import postgres from "postgres";
import { createPublicClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportedRecord } from "../../src/audit/index.js";
import { auditVerify, directAuditBackend } from "../../src/cli/operator/audit.js";
import { walletAddress } from "../../src/devnet/testing/index.js";
import {
  type Booted,
  boot,
  chat,
  dropSchema,
  payCall,
  rowsOf,
  ScriptedModels,
  STORES,
  type StoreKind,
  secretStrings,
  useTestDevnet,
} from "./harness.js";

const devnet = useTestDevnet();
const models = new ScriptedModels();

describe.each(STORES)("the audit trail of paid chats on the devnet (%s)", (store: StoreKind) => {
  let booted: Booted;
  const started = new Date();

  beforeAll(async () => {
    booted = await boot(devnet, { store, models: models.registry });
  });
  afterAll(async () => {
    await booted?.close();
    await dropSchema(booted?.schema);
  });

  async function exported(): Promise<ExportedRecord[]> {
    const audit = booted.running.audit;
    if (!audit) throw new Error("no audit trail");
    await audit.flush();
    const records: ExportedRecord[] = [];
    for await (const record of audit.export(new Date(started.getTime() - 1000))) records.push(record);
    return records;
  }

  it("a paid turn: quoted to settled, with caller, request, limits and a signature's hash; no secret", async () => {
    const token = devnet.manifest.devToken;
    const result = await chat(booted.running, { wallet: walletAddress(devnet, "evm", "payer"), token });
    expect(result.finish.finishReason).toBe("payment-complete");
    const [row] = await rowsOf(booted.running, result);
    const records = (await exported()).filter((r) => r.paymentId === row?.paymentId);
    expect(records.map((r) => r.kind)).toEqual([
      "payment.quoted",
      "payment.reserved",
      "payment.signed",
      "payment.submitted",
      "payment.settled",
    ]);
    for (const r of records) expect(r).toMatchObject({ caller: "devnet", requestId: row?.scopeId });
    expect(records[0]?.data).toMatchObject({
      amountUsd: "0.01",
      limits: { perTransaction: "1.00", perRequest: "2.00", daily: "10.00" },
    });
    expect(records[2]?.data.signatureHash).toMatch(/^[0-9a-f]{64}$/);
    expect(records[4]?.data.txHash).toBe(result.finish.transactionHash);

    const text = JSON.stringify(await exported()).toLowerCase();
    for (const secret of secretStrings(devnet)) expect(text).not.toContain(secret.toLowerCase());
    expect(text).not.toContain(token.toLowerCase());
    const client = createPublicClient({ transport: http(devnet.manifest.evm.rpcUrl) });
    const tx = await client.getTransaction({ hash: result.finish.transactionHash as `0x${string}` });
    const words = tx.input.slice(10).match(/.{64}/g) ?? [];
    expect(words.length).toBeGreaterThan(4);
    for (const word of words) if (!/^0{24}/.test(word)) expect(text).not.toContain(word.toLowerCase());
    // The payment header is base64 of JSON holding the signature: no long base64 run is kept.
    expect(text).not.toMatch(/[a-z0-9+/]{200,}/);
  });

  it("refused turns: payment.refused with the reason, and the limits and price when it got that far", async () => {
    const wallet = walletAddress(devnet, "evm", "payer");
    const token = devnet.manifest.devToken;
    // The offline model asks the price first: the quote's admission refuses it (no payment exists).
    const quoted = await chat(booted.running, { wallet, token, message: "Buy the premium report about AI" });
    // A model that pays anyway: the pipeline refuses the payment itself.
    const message = models.script("premium", [[payCall(devnet, "premium-report")]]);
    const paid = await chat(booted.running, { wallet, token, message });
    for (const r of [quoted, paid]) expect(r.finish.finishReason).toBe("limit-exceeded");
    const refused = (await exported()).filter((r) => r.kind === "payment.refused");
    const of = (requestId: string) => refused.filter((r) => r.requestId === requestId);
    expect(of(quoted.requestId)).toEqual([
      expect.objectContaining({
        caller: "devnet",
        paymentId: null,
        // The price the quote found, though no payment exists (found by a black-box run: blank).
        data: expect.objectContaining({ early: true, reason: "limit_exceeded", wallet, amountUsd: "2.50" }),
      }),
    ]);
    expect(of(paid.requestId)).toEqual([
      expect.objectContaining({
        caller: "devnet",
        data: expect.objectContaining({
          reason: "limit_exceeded",
          amountUsd: "2.50",
          limits: { perTransaction: "1.00", perRequest: "2.00", daily: "10.00" },
        }),
      }),
    ]);
    expect(await booted.running.audit?.refusals(2)).toEqual([
      expect.objectContaining({ caller: "devnet", reason: "limit_exceeded", amountUsd: "2.50" }),
      expect.objectContaining({ caller: "devnet", reason: "limit_exceeded", amountUsd: "2.50" }),
    ]);
    expect(await booted.running.audit?.verify()).toMatchObject({ ok: true });
  });

  // Found by a black-box run: a forged quote id paid nothing and left no trace for the operator.
  it("pay_quote with a quote id this service did not give: payment.refused, reason quote_invalid", async () => {
    const payments = booted.running.payments;
    if (!payments) throw new Error("payments are off");
    const wallet = walletAddress(devnet, "evm", "payer");
    const scopeId = "forged_quote_scope";
    const out = await payments.face.pay(
      {
        caller: "devnet",
        bearerToken: devnet.manifest.devToken,
        wallet: { chain: "evm", address: wallet },
        scopeId,
        signal: new AbortController().signal,
        deadline: Date.now() + 30_000,
      },
      { quoteId: "q1.eyJub3QiOiJhIHF1b3RlIn0.forged" },
    );
    expect(out).toMatchObject({ status: "refused", error: { code: "quote_invalid" } });
    const refused = (await exported()).filter((r) => r.kind === "payment.refused" && r.requestId === scopeId);
    expect(refused).toEqual([
      expect.objectContaining({
        caller: "devnet",
        paymentId: null,
        data: expect.objectContaining({ early: true, reason: "quote_invalid", wallet }),
      }),
    ]);
    expect(await booted.running.audit?.verify()).toMatchObject({ ok: true });
  });

  // On PostgreSQL only (psql is how an operator would change a row by hand; src/audit's own tests
  // change rows on PGlite too). Defined for that store alone, so no run reports it skipped.
  if (store === "postgres")
    it("a record changed by hand: `audit verify` fails naming it", async () => {
      const url = process.env.DATABASE_URL ?? "";
      const settled = (await exported()).find((r) => r.kind === "payment.settled");
      const sql = postgres(url, {
        max: 1,
        onnotice: () => {},
        connection: { search_path: booted.schema ?? "" },
      });
      try {
        await sql
          .unsafe(
            `BEGIN; ALTER TABLE audit_log DISABLE TRIGGER USER;
         UPDATE audit_log SET data = jsonb_set(data, '{amountUsd}', '"0.00"') WHERE seq = ${settled?.seq};
         ALTER TABLE audit_log ENABLE TRIGGER USER; COMMIT`,
          )
          .simple();
      } finally {
        await sql.end();
      }
      const backend = await directAuditBackend({
        databaseUrl: url,
        databaseSchema: booted.schema,
        dataDir: "unused",
      });
      const out: string[] = [];
      try {
        const code = await auditVerify(backend, {
          stdout: { write: (t) => out.push(t) },
          stderr: { write: () => {} },
        });
        expect(code).toBe(1);
      } finally {
        await backend.close();
      }
      expect(out.join("")).toContain(
        `audit trail broken at record ${settled?.seq}: changed (payment.settled at ${settled?.at})`,
      );
    });
});
