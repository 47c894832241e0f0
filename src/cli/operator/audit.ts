import { AuditLog, type VerifyReport } from "../../audit/index.js";
import type { Config } from "../../config/index.js";
import { openStore } from "../../store/index.js";

/**
 * `x402-chat-agent audit verify` and `audit export --since <ISO>` (docs/audit.md#commands): the
 * handlers, over a backend that is the operator API (`GET /api/operator/audit/verify`,
 * `GET /api/operator/audit?since=`) or the store itself (`directAuditBackend`). Each resolves to
 * the exit code: 0 when the chain holds (or the export finished), 1 when it does not.
 */

export interface AuditBackend {
  verify(): Promise<VerifyReport>;
  export(since: Date): AsyncIterable<object>;
}

/** Where the commands write: their output, and what went wrong. */
export interface AuditIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Check the chain; name the first record that was changed, removed or reordered. */
export async function auditVerify(backend: AuditBackend, io: AuditIo): Promise<number> {
  const report = await backend.verify();
  if (report.ok) {
    const head = report.head ? `; head ${report.head.seq} ${report.head.hash}` : "";
    io.stdout.write(`audit trail holds: ${report.records} records${head}\n`);
    return 0;
  }
  const bad = report.firstBad;
  io.stdout.write(
    `audit trail broken at record ${bad.seq}: ${bad.problem} (${bad.kind} at ${bad.at}); ${report.records} records before it hold\n`,
  );
  if (bad.detail) io.stdout.write(`  ${bad.detail}\n`);
  return 1;
}

/** Every record from `since` on, one JSON line each, in chain order. */
export async function auditExport(backend: AuditBackend, since: Date, io: AuditIo): Promise<number> {
  for await (const record of backend.export(since)) io.stdout.write(`${JSON.stringify(record)}\n`);
  return 0;
}

/**
 * The store itself, from the service's configuration (`DATABASE_URL` / `DATA_DIR`): for when the
 * service is not running (PGlite cannot be opened by two processes at once), or for PostgreSQL.
 * Reads only; `close()` when done.
 */
export async function directAuditBackend(
  payments: Pick<Config["payments"], "databaseUrl" | "databaseSchema" | "dataDir">,
): Promise<AuditBackend & { close(): Promise<void> }> {
  const store = await openStore({
    ...(payments.databaseUrl ? { databaseUrl: payments.databaseUrl } : {}),
    ...(payments.databaseSchema ? { schema: payments.databaseSchema } : {}),
    dataDir: payments.dataDir === "memory://" ? "memory://" : `${payments.dataDir}/pglite`,
  });
  const log = new AuditLog({ store: store.audit });
  return {
    verify: () => log.verify(),
    export: (since) => log.export(since),
    close: () => store.close(),
  };
}

/** The operator API of a running service (`X402_CHAT_URL`), with the operator token. */
export function httpAuditBackend(options: {
  url: string;
  token: string;
  fetch?: typeof fetch;
}): AuditBackend {
  const get = async (path: string): Promise<Response> => {
    const response = await (options.fetch ?? fetch)(new URL(path, options.url), {
      headers: { authorization: `Bearer ${options.token}` },
    });
    if (response.ok) return response;
    const problem = (await response.json().catch(() => ({}))) as { detail?: string; code?: string };
    throw new Error(`${path}: ${response.status} ${problem.code ?? ""} ${problem.detail ?? ""}`.trim());
  };
  return {
    verify: async () => (await get("/api/operator/audit/verify")).json() as Promise<VerifyReport>,
    async *export(since) {
      const response = await get(`/api/operator/audit?since=${encodeURIComponent(since.toISOString())}`);
      const decoder = new TextDecoder();
      let buffered = "";
      for await (const chunk of response.body ?? []) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) if (line) yield JSON.parse(line) as object;
      }
      if (buffered.trim()) yield JSON.parse(buffered) as object;
    },
  };
}
