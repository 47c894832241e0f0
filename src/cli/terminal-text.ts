import type { StreamEvent } from "../client/index.js";
import { cleanText, cleanUntrusted, withoutUnsafe } from "../protocol/content.js";

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

/**
 * A line of the session's own (a note, an alert, what to sign) as the terminal may show it: it
 * quotes what a server sent (a problem's detail, a service's name, a malformed line), so the same
 * rule holds: no escapes, controls or bidi overrides, and no carriage return going back over it.
 */
export function terminalLine(text: string): string {
  return cleanText(text).text.replace(/\r\n?/g, "\n");
}
