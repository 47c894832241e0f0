import type { StreamEvent } from "../client/index.js";
import { cleanUntrusted, withoutUnsafe } from "../protocol/content.js";

/**
 * An event as the terminal may show it: nothing a service (or a model) sends may clear the screen,
 * set the title, reorder what is shown, or go back over a line already written (a carriage return:
 * a new line in the words, a space elsewhere).
 */
export function forTerminal(sent: StreamEvent): StreamEvent {
  if (sent.type === "text") return { ...sent, text: withoutUnsafe(sent.text).replace(/\r\n?/g, "\n") };
  return JSON.parse(
    JSON.stringify(cleanUntrusted(sent).value, (_key, value: unknown) =>
      typeof value === "string" ? value.replace(/\r\n?/g, " ") : value,
    ),
  ) as StreamEvent;
}
