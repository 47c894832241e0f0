import { errorMessage, type HangGate } from "./facilitator/app.js";
import type { FaultSwitch } from "./faults.js";
import type { DevnetHttpServer } from "./http-server.js";

export /** What flipping a switch does: release held settlements, close or reopen listeners. */
function onFaultChange(
  faults: FaultSwitch,
  parts: {
    hangs: HangGate;
    late: HangGate;
    facilitatorServer: DevnetHttpServer;
    services: Array<{ server: DevnetHttpServer }>;
    log: (line: string) => void;
  },
): void {
  const { hangs, late, facilitatorServer, services, log } = parts;
  faults.onChange((next, prev) => {
    if (next.settleHangAfterChain !== prev.settleHangAfterChain && !next.settleHangAfterChain)
      hangs.releaseAll();
    if (next.settleLate !== prev.settleLate && !next.settleLate) late.releaseAll();
    const toggle = (server: DevnetHttpServer, refuse: boolean) =>
      (refuse ? server.pause() : server.resume()).catch((error: unknown) =>
        log(`devnet: cannot ${refuse ? "close" : "reopen"} ${server.url}: ${errorMessage(error)}`),
      );
    if ((next.facilitatorDown === "refuse") !== (prev.facilitatorDown === "refuse")) {
      void toggle(facilitatorServer, next.facilitatorDown === "refuse");
    }
    if ((next.serviceDown === "refuse") !== (prev.serviceDown === "refuse")) {
      for (const s of services) void toggle(s.server, next.serviceDown === "refuse");
    }
  });
}
