import { describe, expect, it } from "vitest";
import { answerUnreadable } from "./mcp-lines.js";

async function through(chunks: Buffer[]): Promise<{ passed: string; answered: string[] }> {
  const answered: string[] = [];
  const lines = answerUnreadable((line) => answered.push(line));
  const out: Buffer[] = [];
  lines.on("data", (chunk: Buffer) => out.push(Buffer.from(chunk)));
  for (const chunk of chunks) lines.write(chunk);
  lines.end();
  await new Promise((resolve) => lines.on("end", resolve));
  return { passed: Buffer.concat(out).toString("utf8"), answered };
}

describe("the bridge's stdin, line by line", () => {
  it("passes a line whose character is split across two reads whole", async () => {
    const line = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "find_services", arguments: { query: "Zürich" } } })}\n`;
    const bytes = Buffer.from(line, "utf8");
    const at = bytes.indexOf(Buffer.from("ü", "utf8")) + 1; // inside the two bytes of "ü"
    const { passed, answered } = await through([bytes.subarray(0, at), bytes.subarray(at)]);
    expect(passed).toBe(line);
    expect(answered).toEqual([]);
  });

  it("answers a readable id itself and passes the rest in order", async () => {
    const { passed, answered } = await through([
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping","x":1}\nnot json\n',
      ),
    ]);
    expect(passed).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n');
    expect(answered.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32600 }) }),
    ]);
  });
});
