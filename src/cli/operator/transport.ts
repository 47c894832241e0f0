import type { KeyView, OperatorPayment, PauseTarget, PauseView } from "../../operator/index.js";

/**
 * How the operator CLI reaches the controls (docs/deploy.md#operating-it): over a running
 * service's operator API, or straight to the store from the service's own configuration.
 */
export interface OperatorTransport {
  /** Where the commands go, for the one line that says so. */
  readonly where: string;
  listKeys(): Promise<KeyView[]>;
  createKey(input: Record<string, unknown>): Promise<{ key: KeyView; token: string }>;
  revokeKey(name: string): Promise<KeyView>;
  rotateKey(name: string): Promise<{ key: KeyView; token: string }>;
  listPauses(): Promise<PauseView[]>;
  pause(target: PauseTarget, reason: string): Promise<PauseView[]>;
  resume(target: PauseTarget): Promise<PauseView[]>;
  payments(limit: number): Promise<OperatorPayment[]>;
  close(): Promise<void>;
}

/** Where the operator commands write, and the environment they read. */
export interface OperatorIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** A refusal the service or the store gave, as one line for the terminal. */
export class OperatorError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "OperatorError";
  }
}

/** The operator API of the service at `url`, with the operator token. */
export function httpTransport(url: string, token: string, by: string): OperatorTransport {
  const base = url.replace(/\/+$/, "");
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${base}/api/operator${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          "X-Operator": by,
          ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new OperatorError(`cannot reach ${base} (${why})`, "unreachable");
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: said below with the status.
    }
    if (response.status === 401)
      throw new OperatorError(
        `${base} refused the operator token: set OPERATOR_TOKEN to the one that service uses`,
        "unauthorized",
      );
    if (!response.ok) {
      const code = typeof json.code === "string" ? json.code : `http_${response.status}`;
      const detail = typeof json.detail === "string" ? json.detail : `HTTP ${response.status}`;
      throw new OperatorError(detail, code);
    }
    return json as T;
  };
  return {
    where: base,
    listKeys: async () => (await call<{ keys: KeyView[] }>("GET", "/keys")).keys,
    createKey: (input) => call("POST", "/keys", input),
    revokeKey: async (name) =>
      (await call<{ key: KeyView }>("POST", `/keys/${encodeURIComponent(name)}/revoke`)).key,
    rotateKey: (name) => call("POST", `/keys/${encodeURIComponent(name)}/rotate`),
    listPauses: async () => (await call<{ pauses: PauseView[] }>("GET", "/pauses")).pauses,
    pause: async (target, reason) =>
      (await call<{ pauses: PauseView[] }>("POST", "/pause", { ...target, reason })).pauses,
    resume: async (target) => (await call<{ pauses: PauseView[] }>("POST", "/resume", target)).pauses,
    payments: async (limit) =>
      (await call<{ payments: OperatorPayment[] }>("GET", `/payments?limit=${limit}`)).payments,
    close: async () => {},
  };
}
