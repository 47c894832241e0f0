/**
 * The order test files start in: longest first, so the long files do not start last and leave one
 * worker running alone at the end of a project (the two workers finish together). Vitest's own
 * order uses durations it cached in node_modules on an earlier run; a fresh clone (CI) has none
 * and falls back to file size, which put the longest e2e file last. So the durations come from
 * test/setup/durations.json, measured on a full run and kept in the repository
 * (`node scripts/test-durations.mjs <vitest json report>` rewrites it). A file not listed there
 * (new) starts first, as Vitest does with files it does not know.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const DURATIONS_FILE = "test/setup/durations.json";

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const seconds = readDurations(path.join(root, DURATIONS_FILE));
    const estimate = (spec: TestSpecification) =>
      mocksModules(spec.moduleId)
        ? Number.POSITIVE_INFINITY
        : (seconds[path.relative(root, spec.moduleId).split(path.sep).join("/")] ?? Number.POSITIVE_INFINITY);
    return [...files].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const diff = estimate(b) - estimate(a);
      return Number.isNaN(diff) ? 0 : diff;
    });
  }
}

/**
 * A file that mocks a module (`vi.mock`) starts first, whatever its duration: its worker shares one
 * module cache between files (`isolate: false`, docs/testing.md), so the mock holds only if that
 * file imports the module before any other file of the worker has.
 */
function mocksModules(file: string): boolean {
  try {
    return /\bvi\.mock\(/.test(readFileSync(file, "utf8"));
  } catch {
    return false;
  }
}

/** `{ "<path from the root>": seconds }`; none (an empty order) when the file is missing or bad. */
function readDurations(file: string): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === "number"),
    );
  } catch {
    return {};
  }
}
