import { Transform } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** A line longer than this is passed on as it is: the SDK's transport bounds and refuses it. */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

/**
 * The bridge's stdin, line by line, before the SDK's stdio transport reads it. A line that is one
 * JSON object with an id a client can match (a string or a number) but is not a valid JSON-RPC
 * message (an unknown member, a `__proto__` key, a fractional id) is answered here: -32600 with
 * that id, so the client waiting on it is not left hanging (the SDK can only say `id: null`, since
 * it no longer has the line). Every other line passes on unchanged, in order.
 */
export function answerUnreadable(write: (line: string) => void): Transform {
  let buffered = "";
  // A character whose bytes two reads split is decoded once both have come.
  const decoder = new StringDecoder("utf8");
  const decide = (line: string, push: (line: string) => void) => {
    const id = readableId(line);
    if (id === undefined) return push(`${line}\n`);
    write(
      `${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid Request: not a valid JSON-RPC message" } })}\n`,
    );
  };
  return new Transform({
    decodeStrings: true,
    transform(chunk: Buffer, _encoding, done) {
      buffered += decoder.write(chunk);
      let at = buffered.indexOf("\n");
      while (at >= 0) {
        decide(buffered.slice(0, at), (line) => this.push(line));
        buffered = buffered.slice(at + 1);
        at = buffered.indexOf("\n");
      }
      if (buffered.length > MAX_LINE_CHARS) {
        this.push(buffered);
        buffered = "";
      }
      done();
    },
    flush(done) {
      buffered += decoder.end();
      if (buffered) this.push(buffered);
      done();
    },
  });
}

/** The id of a line that is a JSON object with a string or number id and no valid message; else undefined. */
function readableId(line: string): string | number | undefined {
  const text = line.replace(/\r$/, "");
  if (!text.trimStart().startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const id: unknown = Object.hasOwn(value, "id") ? (value as { id?: unknown }).id : undefined;
  if (typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) return undefined;
  return JSONRPCMessageSchema.safeParse(value).success ? undefined : id;
}
