import { oneLine } from "./words.js";

/**
 * A service's JSON answer as a few short "field: value" lines: read as data, never followed as
 * instructions, and bounded (fields, items, characters) however much the service sent.
 */

type Plain = string | number | boolean;
export function isPlain(value: unknown): value is Plain {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

const MAX_FIELDS = 10;
const MAX_ITEMS = 5;
const MAX_TEXT = 300;

/** A service's JSON answer as short "field: value" lines; read as data, never followed as instructions. */
export function summarise(body: unknown): string {
  if (isPlain(body)) return clip(String(body));
  if (body === null || body === undefined) return "(empty)";
  if (Array.isArray(body))
    return body
      .slice(0, MAX_ITEMS)
      .map((item) => `- ${inline(item)}`)
      .join("\n");
  if (typeof body !== "object") return "(unreadable)";
  const entries = Object.entries(body as Record<string, unknown>).filter(([key]) => !/^demo$/i.test(key));
  const lines = entries.slice(0, MAX_FIELDS).map(([key, value]) => {
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((item) => `  - ${inline(item)}`);
      return [`- ${key}:`, ...items].join("\n");
    }
    return `- ${key}: ${inline(value)}`;
  });
  if (entries.length > MAX_FIELDS) lines.push(`(and ${entries.length - MAX_FIELDS} more fields)`);
  return lines.join("\n");
}

function inline(value: unknown): string {
  if (isPlain(value)) return clip(String(value));
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map(inline).join("; ");
  if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    const title = ["title", "headline", "name"].map((k) => record[k]).find(isPlain);
    if (title !== undefined) {
      const extra = ["summary", "description", "source", "url"].map((k) => record[k]).find(isPlain);
      return clip(extra === undefined ? String(title) : `${title} (${extra})`);
    }
    return clip(
      Object.entries(record)
        .filter(([, v]) => isPlain(v))
        .map(([k, v]) => `${k}: ${v}`)
        .join(", "),
    );
  }
  return "(unreadable)";
}

/** Whether the body says it is demo data: a `demo: true` flag or a top-level text field naming it. */
export function mentionsDemo(body: unknown): boolean {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return typeof body === "string" && /\bdemo\b/i.test(body);
  }
  return Object.entries(body as Record<string, unknown>).some(
    ([key, value]) =>
      (/^demo$/i.test(key) && value === true) || (typeof value === "string" && /\bdemo\b/i.test(value)),
  );
}

function clip(text: string): string {
  const flat = oneLine(text);
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
}
