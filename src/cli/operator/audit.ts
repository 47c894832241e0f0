import { EXIT } from "../exit.js";
import type { OperatorIo } from "./transport.js";

/**
 * `x402-chat-agent audit verify|export`: the audit trail's commands (docs/deploy.md#operating-it).
 * Their handlers come with the audit trail; until then this says so. Extension point: replace
 * this function's body, keeping its signature (the dispatcher in main.ts calls it).
 */
export async function auditMain(sub: string | undefined, io: Pick<OperatorIo, "stderr">): Promise<number> {
  io.stderr.write(
    `x402-chat-agent: audit ${sub ?? ""} is not available in this version (no audit trail yet)\n`.replace(
      "  ",
      " ",
    ),
  );
  return EXIT.error;
}
