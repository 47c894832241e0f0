import { EventEmitter } from "node:events";
import type { Interface } from "node:readline";
import { describe, expect, it } from "vitest";
import { Lines } from "./input.js";

/** A readline interface: lines are emitted, prompts written to `shown`. */
function typed(terminal: boolean) {
  const shown: string[] = [];
  let prompt = "";
  const rl = Object.assign(new EventEmitter(), {
    terminal,
    setPrompt: (text: string) => {
      prompt = text;
    },
    prompt: () => shown.push(prompt),
  }) as unknown as Interface;
  return { rl, shown, lines: new Lines(rl, (text) => shown.push(text)) };
}

describe("what the person types", () => {
  // A black-box review (h34): pasting "Get me the Paris weather⏎yes" answered "Approve and sign?"
  // with the "yes" typed before the question was shown, and the question never appeared.
  it("at a terminal, answers a question about money only with a line typed after it was shown", async () => {
    const { rl, shown, lines } = typed(true);
    rl.emit("line", "Get me the Paris weather");
    rl.emit("line", "yes");
    expect(await lines.next("you › ")).toBe("Get me the Paris weather");
    const answer = lines.answer("Approve and sign? [y/N] ");
    expect(shown).toEqual(["Approve and sign? [y/N] "]);
    rl.emit("line", "n");
    expect(await answer).toBe("n");
    // What was typed ahead is still there, for the chat.
    expect(await lines.next("you › ")).toBe("yes");
  });

  it("from a pipe, reads a script's answers in the order written", async () => {
    const { rl, lines } = typed(false);
    rl.emit("line", "Get me the Paris weather");
    rl.emit("line", "y");
    expect(await lines.next("you › ")).toBe("Get me the Paris weather");
    expect(await lines.answer("Approve and sign? [y/N] ")).toBe("y");
  });
});
