/**
 * docs/protocol.md#errors-before-the-stream: requests Node's HTTP parser refuses (they never reach the app)
 * get the same problem+json body as every other 4xx, with its length and `Connection: close`, over raw
 * sockets.
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
  // As every answer of the app (h49: these, written outside it, lacked it).
  expect(answer.headers["x-content-type-options"]).toBe("nosniff");
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

/** Split the first HTTP/1.1 answer (sized by Content-Length) off the front of `raw`. */
function firstAnswer(raw: Buffer): { answer: RawAnswer; rest: Buffer } | undefined {
  const split = raw.indexOf("\r\n\r\n");
  if (split < 0) return undefined;
  const [statusLine = "", ...lines] = raw.subarray(0, split).toString().split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(":");
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  if (raw.length < split + 4 + length) return undefined;
  const body = raw.subarray(split + 4, split + 4 + length);
  return {
    answer: { status: Number(statusLine.split(" ")[1]), headers, body: body.toString(), bodyBytes: length },
    rest: raw.subarray(split + 4 + length),
  };
}

/**
 * A slow client with a 50 MB body: it sends the head and 1 MiB, finds the server has answered,
 * takes a second (a slow link), sends the remaining 49 MiB and the end of the body, then asks for
 * GET /healthz on the same connection. Resolves with what it read once the server closes.
 */
function slowLargeUpload(headText: string, trailer: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let answered = false;
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    const mib = Buffer.alloc(1024 * 1024, 0x20);
    const sendRest = async () => {
      await new Promise((r) => setTimeout(r, 1000));
      for (let i = 1; i < 50; i++) {
        if (!socket.write(mib)) await new Promise((r) => socket.once("drain", r));
      }
      socket.write(`${trailer}GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      if (!answered && firstAnswer(Buffer.concat(chunks))) {
        answered = true;
        sendRest().catch(reject);
      }
    });
    socket.write(headText);
    socket.write(mib);
  });
}

describe("requests Node answers before the app sees them", () => {
  it("CONNECT: 405 method_not_allowed, not a closed connection", async () => {
    const answer = await send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    expectProblem(answer, 405, "method_not_allowed");
    expect(answer.headers.allow).toBe("GET, HEAD, POST");
  });

  it("Expect: 999-weird: 417 expectation_failed with a problem+json body", async () => {
    const answer = await send(`${head}Expect: 999-weird\r\nContent-Length: 2\r\n\r\n{}`);
    expectProblem(answer, 417, "expectation_failed");
  });

  it("Expect: 100-continue still goes on to the app", async () => {
    const answer = await send(
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
    );
    expect(answer.status).toBe(100);
    expect(answer.body).toContain("HTTP/1.1 200 OK");
  });
});

describe("requests the Node adapter could not make a URL of", () => {
  it("an HTTP/1.1 request without Host: 400 malformed_request (HTTP/1.0 needs none)", async () => {
    const answer = await send("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    expectProblem(answer, 400, "malformed_request");
    expect(JSON.parse(answer.body).detail).toContain("Host header");
    const old = await send("GET /healthz HTTP/1.0\r\n\r\n");
    expect(old.status).toBe(200);
  });

  it("two Host headers: 400 malformed_request (Node would keep the first)", async () => {
    const answer = await send(
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: evil.test\r\nConnection: close\r\n\r\n",
    );
    expectProblem(answer, 400, "malformed_request");
    expect(JSON.parse(answer.body).detail).toContain("one Host header");
  });

  it.each([
    ["a backslash in the path", "GET /api\\payments HTTP/1.1\r\nHost: localhost"],
    ["a space in the Host", "GET /healthz HTTP/1.1\r\nHost: a b"],
    ["a port past 65535", "GET /healthz HTTP/1.1\r\nHost: localhost:99999"],
    ["userinfo in the Host", "GET /healthz HTTP/1.1\r\nHost: user@localhost"],
    ["an asterisk target", "OPTIONS * HTTP/1.1\r\nHost: localhost"],
    ["an absolute target with a broken host", "GET http://[bad/healthz HTTP/1.1\r\nHost: localhost"],
    ["an absolute target of another scheme", "GET ftp://x/healthz HTTP/1.1\r\nHost: localhost"],
  ])("%s: 400 malformed_request as problem+json", async (_name, requestHead) => {
    const answer = await send(`${requestHead}\r\nConnection: close\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.headers["content-type"]).toBe("application/problem+json");
    expect(answer.headers["x-content-type-options"]).toBe("nosniff");
    expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: "malformed_request" });
  });
});

describe("a 50 MB body", () => {
  const size = 50 * 1024 * 1024;
  const cases = [
    { name: "Content-Length", head: `${head}Content-Length: ${size}\r\n\r\n`, trailer: "", status: 413 },
    {
      name: "chunked",
      head: `${head}Transfer-Encoding: chunked\r\n\r\n${size.toString(16)}\r\n`,
      trailer: "\r\n0\r\n\r\n",
      status: 413,
    },
    {
      name: "to a path that does not exist",
      head: `${head.replace("/api/chat", "/no-such-upload")}Content-Length: ${size}\r\n\r\n`,
      trailer: "",
      status: 404,
    },
  ];
  it.each(cases)(
    "($name): the $status stays readable while the client still sends, and the connection serves on",
    async ({ head: requestHead, trailer, status }) => {
      const raw = await slowLargeUpload(requestHead, trailer);
      const first = firstAnswer(raw);
      expect(first?.answer.status).toBe(status);
      expect(first?.answer.headers["content-type"]).toBe("application/problem+json");
      const code = status === 413 ? "payload_too_large" : "not_found";
      expect(JSON.parse(first?.answer.body ?? "")).toMatchObject({ status, code });
      const second = firstAnswer(first?.rest ?? Buffer.alloc(0));
      expect(second?.answer.status).toBe(200);
    },
  );
});

describe("a request whose body never finishes", () => {
  it("is answered 408 request_timeout and closed, not held for Node's 300 s", async () => {
    const slow = await listen(
      buildService().app,
      { host: "127.0.0.1", port: 0 },
      { headersMs: 300, bodyMs: 600 },
    );
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(slow.url).port), "127.0.0.1");
        const chunks: Buffer[] = [];
        socket.on("data", (chunk) => chunks.push(chunk));
        socket.on("error", reject);
        socket.on("close", () => resolve(Buffer.concat(chunks).toString()));
        // 1,000 bytes announced, 46 sent, and then nothing.
        socket.write(
          'POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"messages":[{"role":"user","content":"hi"}]}',
        );
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('"code":"request_timeout"');
    } finally {
      await closeServer(slow.server);
    }
  });
});
