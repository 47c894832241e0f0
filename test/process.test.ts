import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";

/** The real entry point, as `npm start` runs it (payments off to keep it quick). */
function start(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, PORT: "0", PAYMENTS: "off", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function listeningUrl(child: ChildProcess): Promise<string> {
  if (!child.stdout) throw new Error("no stdout");
  for await (const line of createInterface({ input: child.stdout })) {
    const match = /listening on (http:\/\/\S+)/.exec(line);
    if (match?.[1]) return match[1];
  }
  throw new Error("the process ended before listening");
}

describe("the service process", () => {
  it("serves, then stops cleanly on SIGTERM and frees its port", async () => {
    const child = start({ SHUTDOWN_GRACE_MS: "1000" });
    try {
      const url = await listeningUrl(child);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const chat = await fetch(`${url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hello" }] }),
      });
      const text = await chat.text();
      expect(text.trimEnd().split("\n").at(-1)).toMatch(/^d:\{"finishReason":"stop"/);
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("refuses to start on a bad variable, naming it", async () => {
    const child = start({ REQUEST_TIMEOUT_MS: "soon" });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain("REQUEST_TIMEOUT_MS");
  });
});
