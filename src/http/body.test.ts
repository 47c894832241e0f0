import http, { type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "../errors/index.js";
import { readJsonBody } from "./body.js";

/**
 * readJsonBody reading straight from Node's request (what the chat route does under
 * @hono/node-server), over a real socket: the same answers as through `request.body`.
 */
const MAX = 1024;
let server: http.Server;
let port: number;
/** Every outcome the server saw, code or "ok", in order. */
const outcomes: string[] = [];

beforeAll(async () => {
  server = http.createServer((req: IncomingMessage, res) => {
    const request = new Request("http://local/", {
      method: "POST",
      headers: Object.entries(req.headers).flatMap(([k, v]): [string, string][] =>
        typeof v === "string" ? [[k, v]] : [],
      ),
    });
    readJsonBody(request, MAX, req).then(
      (value) => {
        outcomes.push("ok");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ value }));
      },
      (error: unknown) => {
        outcomes.push(isAppError(error) ? error.code : "not-an-app-error");
        res.writeHead(isAppError(error) ? error.status : 500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: isAppError(error) ? error.code : "not-an-app-error" }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** POST the chunks (chunked transfer encoding unless a length is given); resolve status and body. */
function post(
  chunks: (string | Uint8Array)[],
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("readJsonBody from Node's request", () => {
  it("parses a body sent in several chunks", async () => {
    const res = await post(['{"a":', "[1,2", ',"é"]}']);
    expect(res).toEqual({ status: 200, body: { value: { a: [1, 2, "é"] } } });
  });

  it("parses a body with a Content-Length, and drops a UTF-8 byte order mark", async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"ok":true}')]);
    const res = await post([bytes], { "content-length": String(bytes.length) });
    expect(res).toEqual({ status: 200, body: { value: { ok: true } } });
  });

  it("answers 413 when a body without Content-Length grows past the cap", async () => {
    const res = await post(['{"a":"', "x".repeat(MAX), '"}']);
    expect(res).toEqual({ status: 413, body: { code: "payload_too_large" } });
  });

  it("answers 413 from a declared Content-Length over the cap", async () => {
    const body = `{"a":"${"x".repeat(MAX)}"}`;
    const res = await post([body], { "content-length": String(body.length) });
    expect(res).toEqual({ status: 413, body: { code: "payload_too_large" } });
  });

  it("refuses invalid UTF-8 with 400", async () => {
    expect(await post([new Uint8Array([0x7b, 0xff, 0x7d])])).toEqual({
      status: 400,
      body: { code: "invalid_json" },
    });
  });
  it("refuses invalid JSON with 400", async () => {
    expect(await post(['{"a":'])).toEqual({ status: 400, body: { code: "invalid_json" } });
  });
  it("gives up with invalid_request when the client leaves in the middle of the body", async () => {
    const before = outcomes.length;
    const req = http.request({
      host: "127.0.0.1",
      port,
      method: "POST",
      headers: { "content-type": "application/json" },
      agent: false,
    });
    req.on("error", () => {});
    req.write('{"a":');
    await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    for (let i = 0; i < 100 && outcomes.length === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(outcomes.slice(before)).toEqual(["invalid_request"]);
  });

  it("refuses an empty body with 400", async () => {
    expect(await post([])).toEqual({ status: 400, body: { code: "invalid_json" } });
  });
});
