import { utcClock } from "../../protocol/index.js";
import type { DiscoveredService, PayOutput } from "../../tools/contract.js";
import { isPlain, mentionsDemo, summarise } from "./summary.js";
import { network, oneLine, usd } from "./words.js";

/**
 * The offline model's answer after a payment: the service's data, what was paid and the
 * transaction, or why not. Every figure comes from the tool's result.
 */

/** The answer after pay_and_fetch: the data, the amount and the transaction, or why it failed. */
export function payReply(service: DiscoveredService, pay: PayOutput): string {
  const lines: string[] = [];
  if (pay.status === "paid" || pay.status === "free") {
    lines.push(pay.data ? `Here is what ${service.name} returned:` : `${service.name} returned no data.`);
    if (pay.data) {
      lines.push(summarise(pay.data.body));
      if (pay.data.truncated) lines.push("(The answer was long and has been cut short.)");
      if (mentionsDemo(pay.data.body)) lines.push("Note: the service says this is demo data.");
    }
    if (pay.status === "paid") {
      const amount = pay.amountUsd ? usd(pay.amountUsd) : "the quoted price";
      const on = pay.network ? ` on ${network(pay.network)}` : "";
      const tx = pay.transaction ? `; transaction ${pay.transaction}` : "";
      lines.push(`Paid ${amount}${on}${tx}.`);
    } else {
      lines.push("No payment was needed.");
    }
    return lines.join("\n");
  }
  const reason = pay.error ? errorText(pay.error) : "no reason was given";
  switch (pay.status) {
    case "refused":
      return `I didn't pay ${service.name}: ${reason}. Nothing was charged.`;
    case "failed":
      return `The payment to ${service.name} failed: ${reason}.${txText(pay)} You were not charged for data you did not get; you can try again.`;
    case "unknown":
      return `I can't tell whether the payment to ${service.name} went through: ${reason}.${txText(pay)} Please check before trying again, so you don't pay twice.`;
    case "awaiting_approval": {
      const amount = pay.amountUsd ? usd(pay.amountUsd) : "the quoted price";
      const on = pay.network ? ` on ${network(pay.network)}` : "";
      const until = pay.approvalExpiresAt ? ` before ${utcClock(pay.approvalExpiresAt)}` : "";
      return `To get this from ${service.name}, please approve the payment of ${amount}${on} in your wallet${until}. Nothing has been paid yet; if you decline, nothing will be.`;
    }
    case "rejected":
      return `You declined the payment to ${service.name}, so I didn't pay and I don't have its data. Nothing was charged.`;
    case "expired":
      return `The approval for ${service.name} came too late: the payment's window had passed. Nothing was charged; ask again for a new quote.`;
  }
}

/** The answer after an approval: the payment's result, for the service it paid. */
export function approvedReply(pay: PayOutput): string {
  let name = pay.serviceName ?? "the service";
  try {
    if (!pay.serviceName && pay.service) name = new URL(pay.service).host;
  } catch {
    // keep the generic name
  }
  const service = { name } as DiscoveredService;
  return payReply(service, pay);
}

function txText(pay: PayOutput): string {
  return pay.transaction ? ` Transaction: ${pay.transaction}.` : "";
}

/** An error object as a sentence: its message, then its other plain fields (limit, remaining, price...). */
function errorText(error: { code: string; message: string; [key: string]: unknown }): string {
  const extras: string[] = [];
  for (const [key, value] of Object.entries(error)) {
    if (key !== "code" && key !== "message" && isPlain(value))
      extras.push(`${humanKey(key)}: ${moneyish(key, value)}`);
  }
  const tail = extras.length > 0 ? ` (${extras.join(", ")})` : "";
  return `${oneLine(error.message)}${tail}`;
}

function moneyish(key: string, value: string | number | boolean): string {
  return /usd$/i.test(key) && typeof value === "string" ? usd(value) : String(value);
}

function humanKey(key: string): string {
  return key
    .replace(/Usd$/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase();
}
