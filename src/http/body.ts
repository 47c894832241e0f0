import type { IncomingMessage, ServerResponse } from "node:http";
import { AppError } from "../errors/index.js";
import { parseJsonAmountsAsWritten } from "../protocol/index.js";

/** Stateless between calls (no `stream: true`), so one decoder serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Read a JSON request body defensively: content type must be JSON (415), size is capped while
 * reading (413, also when Content-Length lies or is absent), bytes must be valid UTF-8 and the text
 * valid JSON (400). Nothing here can throw anything but AppError.
 *
 * Under Node, pass the server's IncomingMessage (`c.env.incoming` with @hono/node-server): the bytes
 * are then read from it directly, with the same cap, instead of through `request.body`, which
 * makes the adapter build a full fetch Request and a web stream over the socket for every request.
 * What is left of a refused body is read and dropped once the answer is out (`discardRest`).
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  incoming?: IncomingMessage,
): Promise<unknown> {
  requireJson(request);
  const text = await readBodyText(request, maxBytes, incoming);
  if (text.trim() === "")
    throw new AppError("invalid_json", "The request body is empty; send a JSON object.");
  try {
    return parseJsonAmountsAsWritten(text);
  } catch (error) {
    // The reviver walks the value by recursion: thousands of levels overflow the stack.
    const where =
      error instanceof SyntaxError
        ? `: ${error.message}`
        : error instanceof RangeError
          ? ": nested too deeply"
          : "";
    throw new AppError("invalid_json", `The request body is not valid JSON${where}`);
  }
}

/** A body declared JSON (`application/json` or a `+json` type), else 415 `unsupported_media_type`. */
export function requireJson(request: Request): void {
  const type = request.headers.get("content-type") ?? "";
  const mediaType = type.split(";")[0]?.trim().toLowerCase() ?? "";
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) {
    throw new AppError(
      "unsupported_media_type",
      "Send the request body as JSON with Content-Type: application/json.",
      {
        details: { accepted: ["application/json"] },
      },
    );
  }
}

/**
 * A request body as UTF-8 text, whatever its media type (the caller checks that): a UTF-8 charset
 * if one is named (415), no Content-Encoding (415), at most `maxBytes` while reading (413, also
 * when Content-Length lies or is absent), valid UTF-8 (400 `invalid_json`); a body cut off by its
 * client is 400 `invalid_request`. Only AppErrors are thrown.
 */
export async function readBodyText(
  request: Request,
  maxBytes: number,
  incoming?: IncomingMessage,
): Promise<string> {
  const type = request.headers.get("content-type") ?? "";
  // Every charset it names (h49: a second, or an empty one, was not read) must be UTF-8.
  const charsets = [...type.matchAll(/charset\s*=([^;]*)/gi)].map((m) =>
    m[1]?.trim().toLowerCase().replaceAll('"', ""),
  );
  if (charsets.some((charset) => charset !== "utf-8" && charset !== "utf8")) {
    throw new AppError("unsupported_media_type", "The request body must be UTF-8 encoded JSON.");
  }
  // A coded body (gzip, br, ...) would be read as its compressed bytes: say what is accepted instead.
  const coding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (coding && coding !== "identity") {
    throw new AppError("unsupported_media_type", "Send the request body uncompressed: no Content-Encoding.", {
      details: { accepted: ["application/json"], contentEncoding: ["identity"] },
    });
  }
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const bytes =
    incoming && !incoming.readableDidRead
      ? await readIncoming(incoming, maxBytes)
      : await readCapped(request, maxBytes);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new AppError("invalid_json", "The request body is not valid UTF-8.");
  }
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`, {
    details: { maxBytes },
  });
}

/** The body straight from Node's request stream, capped while reading like `readCapped`. */
function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error?: AppError) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onFailure);
      incoming.off("close", onFailure);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        // Stop keeping it; the rest is read and dropped once the 413 is out (discardRest).
        settle(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle();
    // An error, or the connection closing before the end of the body.
    const onFailure = () => settle(new AppError("invalid_request", "The request body could not be read."));
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onFailure);
    incoming.on("close", onFailure);
    if (incoming.readableEnded) onEnd();
  });
}

/** How much of a body refused as too large is read and dropped before the connection is closed. */
export interface DiscardBounds {
  maxBytes: number;
  maxMs: number;
}

/** 64 MiB or 30 s, whichever comes first (a 50 MB upload is read to its end on any sane link). */
export const DISCARD_BOUNDS: DiscardBounds = { maxBytes: 64 * 1024 * 1024, maxMs: 30_000 };

/**
 * Once a request is answered, read what is left of its body and drop it (the server calls this
 * for every request, src/service.ts). A client that reads its answer only once it has sent the
 * whole body (most do) would otherwise lose it, a 413 above all: closing a socket with unread
 * bytes makes the kernel answer with a reset, which discards what the client had not read yet.
 * Once the body has ended the connection serves the next request as usual. Past the bounds the
 * connection is closed, after the answer has been written.
 */
export function discardRest(
  incoming: IncomingMessage,
  outgoing?: ServerResponse,
  bounds: DiscardBounds = DISCARD_BOUNDS,
): void {
  // complete: the parser has had the whole message, so nothing of it is left on the socket.
  if (incoming.complete || incoming.destroyed) return;
  let read = 0;
  const stop = () => {
    clearTimeout(timer);
    incoming.off("data", onData);
    incoming.off("end", stop);
    incoming.off("error", stop);
    incoming.off("close", stop);
  };
  const giveUp = () => {
    stop();
    incoming.pause();
    const socket = incoming.socket;
    const close = () => socket.end(() => socket.destroy());
    if (outgoing && !outgoing.writableFinished && !outgoing.destroyed) outgoing.once("finish", close);
    else close();
  };
  const onData = (chunk: Buffer) => {
    read += chunk.byteLength;
    if (read > bounds.maxBytes) giveUp();
  };
  const timer = setTimeout(giveUp, bounds.maxMs);
  timer.unref();
  incoming.on("data", onData);
  incoming.on("end", stop);
  incoming.on("error", stop);
  incoming.on("close", stop);
  incoming.resume();
}

async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("invalid_request", "The request body could not be read.");
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
