/**
 * The container image is kept honest without a Docker daemon (docs/deploy.md#checked-without-docker).
 * Its build steps
 * are one script (scripts/build-image-tree.sh) that `npm run check:image` runs and starts as the
 * Dockerfile says (scripts/check-image.ts reads the Dockerfile itself); this cheap test holds the
 * Dockerfile to that: multi-stage on pinned bases, the one build script, a non-root user, the
 * command `npm start` runs, and a HEALTHCHECK on readiness whose script is run here against a
 * live service, ready and not.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDockerfile, readDockerfile } from "../scripts/dockerfile.js";
import { closeServer, listen } from "../src/service.js";
import { buildService } from "./helpers.js";

const ROOT = join(import.meta.dirname, "..");
const spec = readDockerfile(join(ROOT, "Dockerfile"));

/** Run the HEALTHCHECK's command as the image would (cwd: the tree), against PORT. */
function healthcheck(port: number): Promise<number | null> {
  const [command = "", ...args] = spec.healthcheck?.command ?? [];
  return new Promise((resolve) => {
    const child = execFile(command === "node" ? process.execPath : command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: String(port) },
    });
    child.once("exit", (code) => resolve(code));
  });
}

describe("the Dockerfile", () => {
  it("builds in a stage of its own, on pinned base images, with the one build script", () => {
    expect(spec.stages.length).toBeGreaterThanOrEqual(2);
    for (const base of spec.stages) expect(base).toMatch(/^node:\d+\.\d+[\w.-]*$/);
    expect(spec.runs).toEqual(["sh scripts/build-image-tree.sh /src /app"]);
    expect(existsSync(join(ROOT, "scripts/build-image-tree.sh"))).toBe(true);
    const script = readFileSync(join(ROOT, "scripts/build-image-tree.sh"), "utf8");
    expect(script).toMatch(/^npm ci$/m);
    expect(script).toMatch(/^npm run build$/m);
    expect(script).not.toMatch(/npm install/);
    expect(script).toMatch(/^npm prune --omit=dev$/m);
  });

  it("runs what `npm start` runs, as a non-root user, listening beyond loopback", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      scripts: { start: string };
    };
    expect(spec.cmd?.join(" ")).toBe(pkg.scripts.start);
    const [uid, gid] = (spec.user ?? "").split(":");
    expect(Number(uid)).toBeGreaterThan(0);
    expect(Number(gid)).toBeGreaterThan(0);
    expect(spec.env.HOST).toBe("0.0.0.0");
    // No embedded devnet by accident in an image: payments on configured networks unless told.
    expect(spec.env.PAYMENTS).toBe("external");
  });

  it("leaves what is built or local out of the build context", () => {
    const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8").split(/\r?\n/);
    expect(ignored).toEqual(expect.arrayContaining(["node_modules", "dist", ".data", ".git", ".env"]));
  });

  it("reads only the exec form, and the final stage's user and environment", () => {
    const parsed = parseDockerfile(
      'FROM a AS b\nUSER 0\nENV X=1\nFROM c\nENV Y=2 \\\n  Z=3\nUSER 5:6\nCMD ["n", "x"]\nHEALTHCHECK --retries=2 CMD ["h"]\n',
    );
    expect(parsed).toMatchObject({
      stages: ["a", "c"],
      env: { Y: "2", Z: "3" },
      user: "5:6",
      cmd: ["n", "x"],
      healthcheck: { command: ["h"], options: { retries: "2" } },
    });
    expect(() => parseDockerfile("FROM a\nCMD node x")).toThrow(/exec form/);
  });
});

describe("the HEALTHCHECK", () => {
  it("is the readiness check: passes when /readyz answers 200, fails when it does not or nothing listens", async () => {
    expect(spec.healthcheck?.command).toEqual(["node", "scripts/healthcheck.mjs"]);
    const ready = buildService();
    const notReady = buildService(
      {},
      {
        readiness: [
          { name: "store", kind: "store", check: () => Promise.reject(new Error("the database is down")) },
        ],
      },
    );
    const up = await listen(ready.app, { host: "127.0.0.1", port: 0 });
    const down = await listen(notReady.app, { host: "127.0.0.1", port: 0 });
    try {
      expect(await healthcheck(Number(new URL(up.url).port))).toBe(0);
      expect(await healthcheck(Number(new URL(down.url).port))).toBe(1);
    } finally {
      await closeServer(up.server);
      await closeServer(down.server);
    }
    // The port is closed now: nothing answers.
    expect(await healthcheck(Number(new URL(up.url).port))).toBe(1);
  });
});
