/**
 * Issue 7, item 11: requests Node's HTTP parser refuses (they never reach the app) get the same
 * problem+json body as every other 4xx, with its length and `Connection: close`, over raw sockets.
 */

import { connect } from "node:net";
import type { ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeServer, listen } from "../src/service.js";
import { buildService } from "./helpers.js";

let server: ServerType;
let port: number;

beforeAll(async () => {
  const service = buildService();
  const listening = await listen(service.app, { host: "127.0.0.1", port: 0 });
  server = listening.server;
  port = Number(new URL(listening.url).port);
});
afterAll(async () => {
  await closeServer(server);
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  bodyBytes: number;
}

/** Send bytes on a fresh connection and read everything until the server closes it. */
function send(payload: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // The server may close while we still write a large payload; what it answered still counts.
      if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error);
    });
    socket.on("close", () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf("\r\n\r\n");
      if (split < 0) {
        reject(new Error(`no HTTP answer: ${JSON.stringify(raw.toString())}`));
        return;
      }
      const [statusLine = "", ...lines] = raw.subarray(0, split).toString().split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(":");
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      const body = raw.subarray(split + 4);
      resolve({
        status: Number(statusLine.split(" ")[1]),
        headers,
        body: body.toString(),
        bodyBytes: body.length,
      });
    });
    socket.write(payload);
  });
}

function expectProblem(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toBe("application/problem+json");
  expect(answer.headers.connection).toBe("close");
  expect(Number(answer.headers["content-length"])).toBe(answer.bodyBytes);
  expect(JSON.parse(answer.body)).toMatchObject({
    type: `https://x402-chat-agent.dev/problems/${code.replaceAll("_", "-")}`,
    status,
    code,
  });
}

const head = "POST /api/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n";

describe("requests the HTTP parser refuses", () => {
  it("bad chunked framing: 400 malformed_request", async () => {
    const answer = await send(`${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`);
    expectProblem(answer, 400, "malformed_request");
  });

  it("Content-Length together with Transfer-Encoding: 400", async () => {
    const answer = await send(
      `${head}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    );
    expectProblem(answer, 400, "malformed_request");
  });

  it("a NUL in a header value: 400", async () => {
    const answer = await send(`${head}X-Note: a\u0000b\r\nContent-Length: 2\r\n\r\n{}`);
    expectProblem(answer, 400, "malformed_request");
  });

  it("a garbage request line: 400", async () => {
    expectProblem(await send("HELLO\u0001 / HTTP/9\r\n\r\n"), 400, "malformed_request");
  });

  it("3,000 headers: 431 headers_too_large", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => `X-Filler-${i}: v\r\n`).join("");
    const answer = await send(`${head}${many}Content-Length: 2\r\n\r\n{}`);
    expectProblem(answer, 431, "headers_too_large");
  });

  it("a 100 KB Authorization header: 431", async () => {
    const answer = await send(
      `${head}Authorization: Bearer ${"a".repeat(100 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expectProblem(answer, 431, "headers_too_large");
    expect(answer.body).not.toContain("aaaaaaaa");
  });

  it("a peer that resets mid-request costs nothing, and the server keeps serving", async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(`${head}Transfer-Encoding: chunked\r\n\r\nzz`);
        socket.resetAndDestroy();
        resolve();
      });
      socket.on("error", () => {});
    });
    const ok = await send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ status: "ok" });
  });
});
