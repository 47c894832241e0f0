import { describe, expect, it } from "vitest";
import { mcpCountsAgainstQuota } from "./http.js";

/** docs/mcp.md#session: which MCP POSTs count against the caller's rate limit. */
describe("mcpCountsAgainstQuota", () => {
  const request = (method: string, id = 1) => ({ jsonrpc: "2.0", id, method });
  const notification = (method: string) => ({ jsonrpc: "2.0", method });

  it("counts a tool call, and any request it does not know to be free", () => {
    expect(mcpCountsAgainstQuota(request("tools/call"))).toBe(true);
    expect(mcpCountsAgainstQuota(request("resources/list"))).toBe(true);
    // A tool call with a notification beside it is still a tool call.
    expect(mcpCountsAgainstQuota([notification("notifications/cancelled"), request("tools/call")])).toBe(
      true,
    );
  });

  it("lets the handshake, tools/list, ping, notifications and answers through uncounted", () => {
    for (const method of ["initialize", "server/discover", "tools/list", "ping"])
      expect(mcpCountsAgainstQuota(request(method)), method).toBe(false);
    expect(mcpCountsAgainstQuota(notification("notifications/initialized"))).toBe(false);
    expect(mcpCountsAgainstQuota({ jsonrpc: "2.0", id: 3, result: { action: "accept" } })).toBe(false);
    // A notification named like a tool call (no id) is still a notification.
    expect(mcpCountsAgainstQuota(notification("tools/call"))).toBe(false);
  });
});
