/**
 * axe-core in the browser tests: its bundle evaluated in the page through the DevTools protocol
 * (no inline script for the Content-Security-Policy to refuse), once per document: evaluating its
 * 650 KB again for each check cost 0.3 s each time (1.5 s the first) on the 2-core machine.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/** axe-core's violations on the page as it is now, each in one line (rule, impact, where). */
export async function axeViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(
    () => typeof (window as unknown as { axe?: { run?: unknown } }).axe?.run === "function",
  );
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document): Promise<{ violations: unknown[] }> } })
      .axe;
    return (await axe.run(document)).violations;
  });
  return (violations as AxeViolation[]).flatMap((v) =>
    v.nodes.map(
      (n) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(n.target)}: ${n.failureSummary ?? ""}`,
    ),
  );
}
