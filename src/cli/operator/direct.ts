import { AuditLog } from "../../audit/index.js";
import type { Config } from "../../config/index.js";
import { AppError } from "../../errors/index.js";
import { ControlPlane, PROPAGATION_MS } from "../../operator/index.js";
import { DataDirInUse, openStore } from "../../store/index.js";
import { OperatorError, type OperatorTransport } from "./transport.js";

/**
 * The operator CLI straight to the store, from the service's own configuration (DATABASE_URL and
 * DATABASE_SCHEMA, or the embedded PGlite under DATA_DIR). Running instances see each change on
 * their next refresh; a change that takes something away answers once they all have. PGlite cannot be opened by two processes: while the
 * service runs on it, the CLI goes over HTTP instead (main.ts decides).
 */
export async function directTransport(config: Config, by: string): Promise<OperatorTransport> {
  const p = config.payments;
  if (p.dataDir === "memory://" && !p.databaseUrl)
    throw new OperatorError(
      "DATA_DIR=memory:// keeps nothing: set X402_CHAT_URL to reach the running service",
      "usage",
    );
  const store = await openStore({
    ...(p.databaseUrl ? { databaseUrl: p.databaseUrl } : {}),
    ...(p.databaseSchema ? { schema: p.databaseSchema } : {}),
    dataDir: `${p.dataDir}/pglite`,
  }).catch((error: unknown) => {
    // A service runs on it (store/dir-lock.ts): its operator API is the way in.
    if (!(error instanceof DataDirInUse)) throw error;
    const how = "set X402_CHAT_URL to the running service's address to reach it over HTTP";
    throw new OperatorError(`${error.message} (${how})`, "store_in_use");
  });
  // Changes made here are audit records as the service's own are (docs/audit.md), written before
  // the store closes.
  const audit = new AuditLog({ store: store.audit });
  const plane = new ControlPlane({
    store: store.operator,
    callerNames: config.auth.tokens.values(),
    onChange: (event) => audit.appendControl(event),
    // As through the service: a pause, a revoke or a rotate answers once every instance holds it.
    propagationMs: PROPAGATION_MS,
  });
  const refusals = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw new OperatorError(error.message, error.code);
      throw error;
    }
  };
  return {
    where: p.databaseUrl
      ? `PostgreSQL (schema ${p.databaseSchema ?? "public"})`
      : `the embedded store in ${p.dataDir}`,
    listKeys: () => refusals(() => plane.listKeys()),
    createKey: (input) => refusals(() => plane.createKey(input, by)),
    revokeKey: (name) => refusals(() => plane.revokeKey(name, by)),
    rotateKey: (name) => refusals(() => plane.rotateKey(name, by)),
    listPauses: () => refusals(() => plane.listPauses()),
    pause: (target, reason) => refusals(() => plane.pause(target, reason, by)),
    resume: (target) => refusals(() => plane.resume(target, by)),
    payments: (limit) => refusals(() => plane.payments(limit)),
    close: async () => {
      await audit.close();
      await store.close();
    },
  };
}
