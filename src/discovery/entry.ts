import type { z } from "zod/v4";
import type { DiscoveredService } from "../tools/contract.js";

/**
 * What every source (a bazaar, the catalog file) yields, and the helpers that make third-party
 * text fit to show a model. Everything a source lists is untrusted: names, descriptions and
 * schemas come from third parties and end up in the model's context, so strings are bounded and
 * stripped of control characters here; the tools' content rule applies on top (docs/payments.md,
 * "What the model reads from outside").
 */

/** A discovered service plus the words it is found by. */
export interface Entry {
  service: DiscoveredService;
  tags: string[];
}

/** One source's entries and what went wrong reading it (a source never throws). */
export interface SourceResult {
  entries: Entry[];
  errors: string[];
}

/** Bounds on third-party text and lists, in characters or items. */
export const LIMITS = {
  name: 80,
  description: 500,
  paramDescription: 200,
  params: 30,
  example: 2_000,
  tags: 10,
};

export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** Collapses whitespace, drops control characters and bounds the length of third-party text. */
export function clean(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, " ");
  const collapsed = flat.replace(/\s+/g, " ").trim();
  return collapsed.length > max ? `${collapsed.slice(0, max - 1)}…` : collapsed;
}

export function sanitizeTags(tags: string[] | undefined): string[] {
  return (tags ?? []).slice(0, LIMITS.tags).map((t) => clean(t, 50));
}

/** The example value itself when its JSON fits {@link LIMITS}, else undefined. */
export function boundedExample(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text !== undefined && text.length <= LIMITS.example ? value : undefined;
}

/** The first few zod issues as `path: message`, for an operator to read. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.slice(0, 5).map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}
