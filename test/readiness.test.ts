/**
 * docs/protocol.md#health-and-readiness: `/healthz` is liveness; `/readyz` checks the dependencies (the
 * store, Redis when configured, one RPC call per configured network, each bounded in time) and answers 200
 * with what it checked, or 503 problem+json naming what is down (never a URL or a query).
 */
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap, type Running } from "../src/bootstrap.js";
import { createChains } from "../src/chains/index.js";
import { loadConfig } from "../src/config/index.js";
import { type ReadinessCheck, ReadinessError } from "../src/http/readiness.js";
import { silentLogger } from "../src/log/index.js";
import { buildService } from "./helpers.js";

async function listenOn(server: Server | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function closedPort(): Promise<number> {
  const server = createTcpServer();
  const port = await listenOn(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A JSON-RPC endpoint: answers eth_blockNumber and getSlot, or HTTP 500 while `failing`. */
function fakeRpc() {
  const state = { failing: false, methods: [] as string[] };
  const server = createHttpServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const call = JSON.parse(raw) as { id: number; method: string };
      state.methods.push(call.method);
      if (state.failing) {
        res.writeHead(500).end("down");
        return;
      }
      const result = call.method === "getSlot" ? 42 : "0x2a";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    });
  });
  return { server, state };
}

/** Just enough of Redis for a client to connect and PING (one reply per command, in order). */
function fakeRedis(): TcpServer {
  return createTcpServer((socket) => {
    socket.on("data", (chunk) => {
      // Each command is an array (`*N`) whose first bulk string is its name.
      for (const command of chunk
        .toString()
        .split(/\*\d+\r\n/)
        .slice(1)) {
        const name = command.split("\r\n")[1]?.toLowerCase();
        if (name === "ping") socket.write("+PONG\r\n");
        else if (name === "info") {
          const info = "# Server\r\nredis_version:7.2.0\r\nloading:0\r\n";
          socket.write(`$${info.length}\r\n${info}\r\n`);
        } else socket.write("+OK\r\n");
      }
    });
  });
}

const ok: ReadinessCheck = { name: "store", kind: "store", check: async () => {} };

describe("GET /readyz", () => {
  it("answers 200 with the checks it ran (none configured: ready once listening)", async () => {
    const { app } = buildService();
    const res = await app.request("/readyz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: [] });
  });

  it("answers 503 problem+json naming what is down, failed or too slow", async () => {
    const { app } = buildService(
      {},
      {
        readinessTimeoutMs: 200,
        readiness: [
          ok,
          {
            name: "eip155:8453",
            kind: "chain",
            check: async () => {
              throw new ReadinessError("the RPC endpoint answered HTTP 502");
            },
          },
          { name: "solana:devnet", kind: "chain", check: () => new Promise(() => {}) },
        ],
      },
    );
    const res = await app.request("/readyz");
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("5");
    const problem = await res.json();
    expect(problem).toMatchObject({
      status: 503,
      code: "not_ready",
      checks: [
        { name: "store", kind: "store", ok: true },
        { name: "eip155:8453", kind: "chain", ok: false, reason: "the RPC endpoint answered HTTP 502" },
        { name: "solana:devnet", kind: "chain", ok: false, reason: "no answer within 200 ms" },
      ],
    });
    expect(problem.detail).toContain("eip155:8453, solana:devnet");
  });

  it("says shutting_down while draining, and /healthz stays liveness", async () => {
    const service = buildService({}, { readiness: [ok] });
    await service.shutdown();
    const res = await service.app.request("/readyz");
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe("shutting_down");
  });

  // Found by a black-box run: Redis down made every instance unready while all served (the rate
  // limit fails open per instance), so a load balancer would have pulled them all.
  it("checks Redis when REDIS_URL is set: down is degraded, still ready; then up", async () => {
    const down = buildService({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const degraded = await down.app.request("/readyz");
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toMatchObject({
      status: "degraded",
      checks: [{ name: "redis", kind: "redis", ok: false }],
    });
    await down.shutdown();

    const redis = fakeRedis();
    const port = await listenOn(redis);
    const up = buildService({ REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const res = await up.app.request("/readyz");
      expect(res.status).toBe(200);
      expect((await res.json()).checks).toMatchObject([{ name: "redis", ok: true }]);
    } finally {
      await up.shutdown();
      redis.close();
    }
  });
});

describe("RPC checks", () => {
  const rpc = fakeRpc();
  let url: string;
  beforeAll(async () => {
    url = `http://127.0.0.1:${await listenOn(rpc.server)}`;
  });
  afterAll(() => {
    rpc.server.close();
  });

  it("asks each chain family's cheap call: eth_blockNumber on EVM networks, getSlot on Solana", async () => {
    const signal = AbortSignal.timeout(2000);
    const chains = createChains({ "eip155:8453": url, "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": url });
    await chains.ping("eip155:8453", signal);
    await chains.ping("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", signal);
    expect(rpc.state.methods.slice(-2)).toEqual(["eth_blockNumber", "getSlot"]);
  });

  describe("in the bootstrapped service (a store and a configured network)", () => {
    let running: Running;
    beforeAll(async () => {
      running = await bootstrap(
        loadConfig({ PAYMENTS: "external", DATA_DIR: "memory://", RPC_URLS: `eip155:8453=${url}` }),
        silentLogger,
      );
    });
    afterAll(async () => {
      await running?.service.shutdown();
    });

    it("is ready while the store and the RPC answer, and names the network (not its URL) when not", async () => {
      rpc.state.failing = false;
      const ready = await running.service.app.request("/readyz");
      expect(ready.status).toBe(200);
      expect((await ready.json()).checks).toMatchObject([
        { name: "store", kind: "store", ok: true },
        { name: "eip155:8453", kind: "chain", ok: true },
      ]);

      rpc.state.failing = true;
      const down = await running.service.app.request("/readyz");
      expect(down.status).toBe(503);
      const text = await down.text();
      expect(text).not.toContain(url);
      expect(JSON.parse(text).checks).toMatchObject([
        { name: "store", ok: true },
        { name: "eip155:8453", ok: false, reason: "the RPC endpoint answered HTTP 500" },
      ]);
      expect((await running.service.app.request("/healthz")).status).toBe(200);
    });
  });
});
