import { readFileSync } from "node:fs";

/**
 * What the Dockerfile says about how the image runs, read from the file itself, so that
 * `npm run check:image` (scripts/check-image.ts) starts the tree exactly as the image would and a
 * test can hold the Dockerfile to the script (test/image.test.ts). Only the instructions this
 * project's Dockerfile uses: FROM, RUN, ENV (key=value pairs), USER, HEALTHCHECK and CMD in exec
 * (JSON array) form.
 */
export interface ImageSpec {
  /** The base image of each stage, in order. */
  stages: string[];
  /** RUN lines of every stage (shell form, as written). */
  runs: string[];
  /** ENV of the final stage. */
  env: Record<string, string>;
  /** USER of the final stage, as written (`uid:gid` here). */
  user: string | undefined;
  /** HEALTHCHECK's command (exec form) and its options. */
  healthcheck: { command: string[]; options: Record<string, string> } | undefined;
  /** CMD (exec form). */
  cmd: string[] | undefined;
}

/** Instructions with their continuation lines joined, comments and blank lines dropped. */
function instructions(text: string): string[] {
  const joined = text.replace(/\\\r?\n/g, " ");
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

function execForm(rest: string, what: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rest);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === "string"))
    throw new Error(`${what} must be in exec form (a JSON array of strings)`);
  return parsed;
}

export function parseDockerfile(text: string): ImageSpec {
  const spec: ImageSpec = {
    stages: [],
    runs: [],
    env: {},
    user: undefined,
    healthcheck: undefined,
    cmd: undefined,
  };
  for (const line of instructions(text)) {
    const [keyword = "", ...words] = line.split(/\s+/);
    const rest = line.slice(keyword.length).trim();
    switch (keyword.toUpperCase()) {
      case "FROM":
        spec.stages.push(words[0] ?? "");
        // Each stage starts afresh: what the final stage says is what the image runs with.
        spec.env = {};
        spec.user = undefined;
        break;
      case "RUN":
        spec.runs.push(rest);
        break;
      case "ENV":
        for (const pair of words) {
          const eq = pair.indexOf("=");
          if (eq <= 0) throw new Error(`ENV ${pair}: only key=value pairs are read`);
          spec.env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        break;
      case "USER":
        spec.user = words[0];
        break;
      case "HEALTHCHECK": {
        const at = rest.indexOf("CMD ");
        if (at < 0) throw new Error("HEALTHCHECK must name a CMD");
        const options = Object.fromEntries(
          rest
            .slice(0, at)
            .trim()
            .split(/\s+/)
            .filter(Boolean)
            .map((o) => o.replace(/^--/, "").split("=") as [string, string]),
        );
        spec.healthcheck = { command: execForm(rest.slice(at + 4).trim(), "HEALTHCHECK CMD"), options };
        break;
      }
      case "CMD":
        spec.cmd = execForm(rest, "CMD");
        break;
    }
  }
  return spec;
}

export function readDockerfile(path: string): ImageSpec {
  return parseDockerfile(readFileSync(path, "utf8"));
}
