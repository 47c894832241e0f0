/**
 * compose.yaml is not run here (no Docker daemon; docs/deploy.md#compose): this holds its text to
 * what the docs promise. Every variable of the README's configuration reaches both replicas
 * through an optional `.env` (`env_file`), the topology's own values win over it, QUOTE_SECRET is
 * required, and the signers file reaches both replicas as a compose secret (compose.signers.yaml),
 * never as an environment variable's value.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readDockerfile } from "../scripts/dockerfile.js";

const ROOT = join(import.meta.dirname, "..");
const read = (name: string) => readFileSync(join(ROOT, name), "utf8");

/** The lines of a top-level block (`name:` at column 0) of a YAML file, comments left out. */
function block(text: string, name: string): string[] {
  const lines = text.split(/\r?\n/).filter((line) => !/^\s*#/.test(line) && line.trim() !== "");
  const start = lines.findIndex((line) => line.startsWith(`${name}:`));
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && /^\S/.test(line));
  return lines.slice(start, end < 0 ? undefined : end);
}

/** The keys directly under `key:` inside a block, at the next indentation. */
function keysUnder(lines: string[], key: string): string[] {
  const start = lines.findIndex((line) => line.trim() === `${key}:`);
  if (start < 0) return [];
  const indent = (lines[start]?.match(/^\s*/)?.[0].length ?? 0) + 2;
  const keys: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const depth = line.match(/^\s*/)?.[0].length ?? 0;
    if (depth < indent) break;
    if (depth === indent) keys.push(line.trim().replace(/:.*$/, ""));
  }
  return keys;
}

describe("compose.yaml", () => {
  const compose = read("compose.yaml");
  const service = block(compose, "x-service");

  it("gives both replicas the same service definition", () => {
    const services = block(compose, "services");
    for (const name of ["agent-1", "agent-2"]) {
      const at = services.findIndex((line) => line.trim() === `${name}:`);
      expect(at, name).toBeGreaterThan(0);
      expect(services[at + 1]?.trim()).toBe("<<: *service");
    }
    expect(service[0]).toBe("x-service: &service");
  });

  it("reads an optional .env beside it into every replica", () => {
    const text = service.join("\n");
    expect(text).toMatch(/\n {2}env_file:\n {4}- path: \.env\n {6}required: false\n/);
  });

  it("sets only what the topology decides in `environment`, so .env reaches the rest", () => {
    expect(keysUnder(service, "environment").sort()).toEqual([
      "DATABASE_URL",
      "DATA_DIR",
      "HOST",
      "PAYMENTS",
      "PORT",
      "QUOTE_SECRET",
      "REDIS_URL",
    ]);
    // A .env written for `npm start` (HOST=127.0.0.1, DATA_DIR=.data) must not move the replicas:
    // they keep the image's own values.
    const image = readDockerfile(join(ROOT, "Dockerfile")).env;
    const text = service.join("\n");
    for (const name of ["HOST", "PORT", "DATA_DIR"]) {
      const value = new RegExp(`\\n {4}${name}: "?([^"\\n]+)"?\\n`).exec(text)?.[1];
      expect(value, name).toBe(image[name]);
    }
    // Required: compose stops with the message when it is unset (a quote id crosses replicas).
    expect(service.join("\n")).toMatch(/QUOTE_SECRET: \$\{QUOTE_SECRET:\?[^}]+\}/);
  });
});

describe("compose.signers.yaml", () => {
  const signers = read("compose.signers.yaml");

  it("mounts the signers file as a secret in both replicas and points SIGNERS_FILE at it", () => {
    const anchor = block(signers, "x-signers");
    expect(anchor[0]).toBe("x-signers: &signers");
    expect(anchor.join("\n")).toMatch(/\n {2}secrets:\n {4}- source: signers\n {6}target: signers\n/);
    expect(anchor.join("\n")).toMatch(/\n {4}SIGNERS_FILE: \/run\/secrets\/signers(\n|$)/);
    const services = block(signers, "services");
    for (const name of ["agent-1", "agent-2"]) {
      const at = services.findIndex((line) => line.trim() === `${name}:`);
      expect(services[at + 1]?.trim(), name).toBe("<<: *signers");
    }
    expect(keysUnder(block(signers, "secrets"), "signers")).toEqual(["file"]);
    expect(block(signers, "secrets").join("\n")).toMatch(
      /file: \$\{SIGNERS_SECRET_FILE:-\.\/signers\.json\}/,
    );
  });

  it("is named where compose.yaml and the docs say", () => {
    expect(read("compose.yaml")).toMatch(/COMPOSE_FILE=compose\.yaml:compose\.signers\.yaml/);
    expect(read("docs/deploy.md")).toMatch(/COMPOSE_FILE=compose\.yaml:compose\.signers\.yaml/);
  });
});
