/**
 * Readiness checks Redis through the rate limiter's own connection (docs/protocol.md#health-and-readiness):
 * one connection for the quota and the probe, not a second client to the same URL, closed on shutdown.
 */
import { createServer, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { buildService, chatRequest, USER_HI } from "../../test/helpers.js";

/** Just enough of Redis for ioredis: PING, INFO and QUIT answered, anything else +OK; connections counted. */
function fakeRedis() {
  const state = { opened: 0, open: new Set<Socket>(), pings: 0 };
  const server: Server = createServer((socket) => {
    state.opened++;
    state.open.add(socket);
    socket.on("close", () => state.open.delete(socket));
    socket.on("data", (chunk) => {
      for (const command of chunk
        .toString()
        .split(/\*\d+\r\n/)
        .slice(1)) {
        const name = command.split("\r\n")[1]?.toLowerCase();
        if (name === "ping") {
          state.pings++;
          socket.write("+PONG\r\n");
        } else if (name === "info") {
          const info = "# Server\r\nredis_version:7.2.0\r\nloading:0\r\n";
          socket.write(`$${info.length}\r\n${info}\r\n`);
        } else if (name === "quit") {
          socket.end("+OK\r\n"); // as Redis does: answer, then close
        } else socket.write("+OK\r\n");
      }
    });
  });
  return { server, state };
}

describe("readiness and the rate limiter share one Redis connection", () => {
  it("probes over the limiter's connection: one connection for chats and probes, closed on shutdown", async () => {
    const redis = fakeRedis();
    await new Promise<void>((resolve) => redis.server.listen(0, "127.0.0.1", resolve));
    const { port } = redis.server.address() as { port: number };
    const service = buildService({ REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const first = await service.app.request("/readyz");
      expect(first.status).toBe(200);
      expect((await first.json()).checks).toMatchObject([{ name: "redis", kind: "redis", ok: true }]);
      const chat = await service.app.request("/api/chat", chatRequest(USER_HI));
      expect(chat.status).toBe(200);
      await chat.text();
      expect((await service.app.request("/readyz")).status).toBe(200);
      expect(redis.state.pings).toBe(2);
      expect(redis.state.opened).toBe(1);
    } finally {
      await service.shutdown();
    }
    await expect.poll(() => redis.state.open.size).toBe(0);
    redis.server.close();
  });
});
