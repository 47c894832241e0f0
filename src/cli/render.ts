import {
  type BudgetMeter,
  type ErrorPayload,
  type FinishPayload,
  PAYMENT_STATUS,
  type PaymentUpdate,
  type StreamEvent,
} from "../client/index.js";
import { networkLabel } from "../protocol/networks.js";
import { forTerminal, terminalLine } from "./terminal-text.js";

/**
 * How the terminal chat shows a turn. The answer's words go to stdout as they stream; everything
 * about the turn (payment status lines, errors, notes) goes to stderr, so `> answer.txt` keeps the
 * words alone. On a TTY each payment is one live line, redrawn in place as its status moves, with
 * a spinner while it is under way; elsewhere each status change is a line of its own. Colour only
 * on a TTY, and never with NO_COLOR set (https://no-color.org).
 */

export interface Sink {
  write(text: string): void;
  /** Whether this is a terminal (live lines, spinners and colours). */
  isTTY: boolean;
  /** The terminal's width now: a live line is kept to one row, so redrawing it in place works. */
  columns?: () => number | undefined;
}

export interface Style {
  color: boolean;
}

/** Colour decision: a TTY, NO_COLOR unset or empty, TERM not `dumb`; FORCE_COLOR forces it on. */
export function colorFor(isTTY: boolean, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return isTTY && env.TERM !== "dumb";
}

const CODES = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
type Paint = (text: string) => string;

function painter(color: boolean): Record<keyof typeof CODES, Paint> {
  const entries = Object.entries(CODES).map(([name, [on, off]]) => [
    name,
    (text: string) => (color ? `\x1b[${on}m${text}\x1b[${off}m` : text),
  ]);
  return Object.fromEntries(entries) as Record<keyof typeof CODES, Paint>;
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

const usd = (value: string) => `$${value}`;

/** Words for a status, as the person reading wants them. */
export function statusWords(update: PaymentUpdate): string {
  const why = update.reason ?? update.message;
  switch (update.status) {
    case "quoted":
      return "quoted";
    case "awaiting_approval":
      return `awaiting your approval${update.approval ? ` (${expiresIn(update.approval.expiresAt)})` : ""}`;
    case "reserved":
    case "signed":
      return "signing";
    case "submitted":
      return "settling";
    case "settled":
      return `settled, tx ${update.transaction ?? "?"}`;
    case "refused":
      return `refused${why ? `: ${why}` : ""}`;
    case "failed":
      return `failed${why ? `: ${why}` : ""}`;
    case "unknown":
      return "outcome unclear: the service checks the chain and records it";
    case "released":
      return `released${why ? `: ${why}` : ""} (nothing paid)`;
    case "rejected":
      return "rejected (nothing paid)";
    case "expired":
      return "approval expired (nothing paid)";
  }
}

/** The budget as the meter says: what is left, after this payment while it is only quoted. */
export function budgetWords(
  budget: BudgetMeter | undefined,
  status: PaymentUpdate["status"],
): string | undefined {
  if (!budget) return undefined;
  const before = status === "quoted" || status === "awaiting_approval";
  const left = (meter: BudgetMeter["perRequest"]) =>
    before && meter.remainingAfter ? meter.remainingAfter : meter.remaining;
  return `${before ? "leaves" : "left"} ${usd(left(budget.perRequest).usd)} of ${usd(budget.perRequest.limit.usd)} this request, ${usd(left(budget.daily).usd)} of ${usd(budget.daily.limit.usd)} today`;
}

/** "expires in 58 s" (or the time itself when it cannot be read). */
export function expiresIn(iso: string, now = Date.now()): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return `until ${iso}`;
  const seconds = Math.round((at - now) / 1000);
  if (seconds <= 0) return "expired";
  return seconds < 120 ? `expires in ${seconds} s` : `expires in ${Math.round(seconds / 60)} min`;
}

/** A service as a person reads it: its name, else its URL without the scheme. */
export function serviceName(service: PaymentUpdate["service"]): string {
  return service.name ?? service.url.replace(/^https?:\/\//, "");
}

/** One payment's status line, without colour or spinner. */
export function paymentLine(update: PaymentUpdate): string {
  const name = serviceName(update.service);
  const cost = update.amount ? ` ${usd(update.amount.usd)}` : "";
  const network = update.network ? ` on ${networkLabel(update.network)}` : "";
  const budget =
    update.status === "quoted" || update.status === "awaiting_approval" || update.status === "settled"
      ? budgetWords(update.budget, update.status)
      : undefined;
  const tab = update.tab
    ? ` · from your tab, ${usd(update.tab.left.usd)} left of ${usd(update.tab.amount.usd)}`
    : "";
  return `${name}${cost}${network} · ${statusWords(update)}${budget ? ` · ${budget}` : ""}${tab}`;
}

export class Renderer {
  private readonly paint: Record<keyof typeof CODES, Paint>;
  private outAtLineStart = true;
  /** The live status line at the bottom of stderr (TTY only), not yet ended by a newline. */
  private live:
    | { paymentId: string; text: string; status: PaymentUpdate["status"]; done: boolean }
    | undefined;
  private waiting = false;
  private frame = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly lastStatus = new Map<string, string>();

  constructor(
    private readonly out: Sink,
    private readonly err: Sink,
    style: Style,
  ) {
    this.paint = painter(style.color);
  }

  /** Before a turn: a spinner until the first event (TTY only). */
  start(): void {
    if (!this.err.isTTY) return;
    this.waiting = true;
    this.err.write(this.paint.dim(SPINNER[0] ?? ""));
    this.tick();
  }

  event(sent: StreamEvent): void {
    this.clearWaiting();
    const event = forTerminal(sent);
    switch (event.type) {
      case "text":
        this.endLive();
        this.out.write(event.text);
        if (event.text.length > 0) this.outAtLineStart = event.text.endsWith("\n");
        break;
      case "payment":
        this.payment(event.payment);
        break;
      case "error":
        this.error(event.error);
        break;
      case "finish":
        this.finish(event.finish);
        break;
    }
  }

  /** A line about the session (dim), on stderr. */
  note(text: string): void {
    this.clearWaiting();
    this.endLive();
    this.endOutLine();
    this.err.write(`${this.paint.dim(terminalLine(text))}\n`);
  }

  /** A warning or failure (red), on stderr. */
  alert(text: string): void {
    this.clearWaiting();
    this.endLive();
    this.endOutLine();
    this.err.write(`${this.paint.red(terminalLine(text))}\n`);
  }

  /** Plain output for the person (what to sign, how to resume), on stdout. */
  print(text: string): void {
    this.clearWaiting();
    this.endLive();
    this.endOutLine();
    this.out.write(terminalLine(text.endsWith("\n") ? text : `${text}\n`));
  }

  /** Stop timers; end any open line. */
  close(): void {
    this.clearWaiting();
    this.endLive();
    this.endOutLine();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private payment(update: PaymentUpdate): void {
    const text = paymentLine(update);
    const done = !PAYMENT_STATUS[update.status].inFlight;
    if (!this.err.isTTY) {
      if (this.lastStatus.get(update.paymentId) === text) return;
      this.lastStatus.set(update.paymentId, text);
      this.endOutLine();
      this.err.write(`${this.mark(update.status, false)} ${text}\n`);
      return;
    }
    if (this.live && this.live.paymentId !== update.paymentId) this.endLive();
    if (!this.live) this.endOutLine();
    this.live = { paymentId: update.paymentId, text, status: update.status, done };
    this.drawLive();
    if (done) this.endLive();
    else this.tick();
  }

  private error(error: ErrorPayload): void {
    this.alert(`✗ ${error.code}: ${error.message}`);
  }

  private finish(finish: FinishPayload): void {
    this.endLive();
    this.endOutLine();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const paid = finish.payments.filter((p) => p.status === "settled");
    const parts: string[] = [finish.finishReason];
    if (paid.length > 0) parts.push(`${paid.length} paid`);
    if (finish.payments.some((p) => p.pending)) parts.push("some payments still settling in the background");
    this.err.write(`${this.paint.dim(`(${parts.join(" · ")})`)}\n`);
  }

  private mark(status: PaymentUpdate["status"], spinning: boolean): string {
    if (status === "settled") return this.paint.green("✓");
    if (status === "awaiting_approval") return this.paint.yellow("?");
    if (!PAYMENT_STATUS[status].inFlight) return this.paint.red("✗");
    return this.paint.cyan(spinning ? (SPINNER[this.frame % SPINNER.length] ?? "•") : "•");
  }

  private drawLive(): void {
    if (!this.live) return;
    const width = this.live.done ? undefined : this.err.columns?.();
    // A line wider than the terminal wraps, and `\r` would redraw only its last row.
    const text =
      width && this.live.text.length > width - 3
        ? `${this.live.text.slice(0, Math.max(0, width - 4))}…`
        : this.live.text;
    this.err.write(`\r\x1b[2K${this.mark(this.live.status, !this.live.done)} ${text}`);
  }

  private endLive(): void {
    if (!this.live) return;
    this.err.write("\n");
    this.live = undefined;
  }

  private endOutLine(): void {
    if (!this.outAtLineStart) {
      this.out.write("\n");
      this.outAtLineStart = true;
    }
  }

  private clearWaiting(): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.err.write("\r\x1b[2K");
  }

  private tick(): void {
    if (this.timer || !this.err.isTTY) return;
    this.timer = setInterval(() => {
      this.frame++;
      if (this.waiting) this.err.write(`\r${this.paint.dim(SPINNER[this.frame % SPINNER.length] ?? "")}`);
      else if (this.live && !this.live.done) this.drawLive();
      else {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }, 80);
    this.timer.unref?.();
  }
}
