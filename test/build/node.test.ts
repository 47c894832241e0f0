/**
 * One Node floor everywhere (docs/deploy.md#node): package.json's `engines`, the Node that
 * `npm install` brings (packages/node-runtime), the container's base image, CI's second LTS and
 * the README agree, and this test itself runs on a Node the service accepts (npm test runs on
 * node_modules/.bin's Node, not the system's).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript script without declarations
import { NODE_FLOOR, nodeTooOld } from "../../scripts/node-version.mjs";

const root = join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(join(root, file), "utf8");
const json = (file: string) => JSON.parse(read(file));
const [floorMajor, floorMinor] = NODE_FLOOR as [number, number];
const runtime = json("packages/node-runtime/package.json") as {
  optionalDependencies: Record<string, string>;
};
const bundled = Object.values(runtime.optionalDependencies);

describe("the Node floor", () => {
  it("is package.json's engines, and the client package's", () => {
    expect(json("package.json").engines.node).toBe(`>=${floorMajor}.${floorMinor}`);
    expect(json("packages/client/package.json").engines.node).toBe(`>=${floorMajor}.${floorMinor}`);
    expect(floorMajor).toBeGreaterThanOrEqual(22);
  });

  it("is what npm install brings: one exact version of the floor's line, dev-only in the lockfile", () => {
    expect(new Set(bundled).size).toBe(1);
    const version = bundled[0] ?? "";
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(nodeTooOld(version)).toBeUndefined();
    expect(version.split(".")[0]).toBe(String(floorMajor));
    const lock = json("package-lock.json") as { packages: Record<string, Record<string, unknown>> };
    for (const name of Object.keys(runtime.optionalDependencies)) {
      const entry = lock.packages[`node_modules/${name}`];
      expect(entry, name).toMatchObject({ version, dev: true, optional: true });
      expect(entry?.hasInstallScript, name).toBeUndefined();
    }
  });

  it("runs this test", () => {
    expect(nodeTooOld()).toBeUndefined();
  });

  it("refuses an older Node in words, and accepts 22 and 24", () => {
    expect(nodeTooOld("20.20.2")).toMatch(/Node 20\.20\.2 .*older than the 22\.12.*docs\/deploy\.md#node/);
    expect(nodeTooOld("22.11.0")).toBeDefined();
    expect(nodeTooOld("22.12.0")).toBeUndefined();
    expect(nodeTooOld("24.21.0")).toBeUndefined();
  });

  it("is the container's, CI's second run is the next LTS, and the README says so", () => {
    const [major, minor] = (bundled[0] ?? "").split(".");
    const bases = [...read("Dockerfile").matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases) expect(base).toMatch(new RegExp(`^node:${major}\\.${minor}-`));
    expect(read(".ci/run")).toMatch(new RegExp(`^NODE24_VERSION=${floorMajor + 2}\\.\\d+\\.\\d+$`, "m"));
    expect(read("README.md")).toContain(`Node ${floorMajor}.${floorMinor} or newer`);
  });
});
