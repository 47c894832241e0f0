import { AppError } from "../errors/index.js";

/**
 * Read a JSON request body defensively: content type must be JSON (415), size is capped while
 * reading (413, also when Content-Length lies or is absent), bytes must be valid UTF-8 and the text
 * valid JSON (400). Nothing here can throw anything but AppError.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
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
  const charset = /charset=([^;]+)/i.exec(type)?.[1]?.trim().toLowerCase().replaceAll('"', "");
  if (charset && charset !== "utf-8" && charset !== "utf8") {
    throw new AppError("unsupported_media_type", "The request body must be UTF-8 encoded JSON.");
  }
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const bytes = await readCapped(request, maxBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new AppError("invalid_json", "The request body is not valid UTF-8.");
  }
  if (text.trim() === "")
    throw new AppError("invalid_json", "The request body is empty; send a JSON object.");
  try {
    return JSON.parse(text);
  } catch (error) {
    const where = error instanceof SyntaxError ? `: ${error.message}` : "";
    throw new AppError("invalid_json", `The request body is not valid JSON${where}`);
  }
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`, {
    details: { maxBytes },
  });
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
