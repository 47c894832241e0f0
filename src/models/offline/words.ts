import { displayUsd, parseUsd } from "../../money/index.js";
import { networkLabel } from "../../protocol/index.js";

/**
 * How the offline model writes a figure or a piece of outside text into its sentences: USD as people
 * read it, outside text on one line so it fits the sentence that quotes it.
 */

/** "0.01" -> "$0.01"; text that is not a USD amount is shown as given. */
export function usd(amount: string): string {
  const parsed = parseUsd(amount);
  return parsed.ok ? displayUsd(parsed.atomic) : `$${amount}`;
}

/** A network by its name for people ("Base Sepolia"), or its id when it has none. */
export function network(id: string): string {
  return networkLabel(id);
}

/** Outside text on one line, without its closing full stop (the sentence puts its own). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/\.$/, "");
}
