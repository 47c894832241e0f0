/**
 * The devnet Solana chain's clock: slot n comes at start + n × slot time by the wall clock, so the
 * chain never falls behind however busy the process, and a block's time follows. Tests travel: to
 * a later time (block times jump, slots go on) or to a later slot (the slots in between pass at
 * once, their time with them).
 */
export class SlotClock {
  private readonly startMs: number;
  /** Time travel: from `fromSlot` on, chain time = wall time + `offsetMs`. */
  private readonly offsets: Array<{ fromSlot: number; offsetMs: number }> = [{ fromSlot: 0, offsetMs: 0 }];
  /** Slots skipped by travel to a later slot: the chain runs that far ahead of the wall clock. */
  private slotsAhead = 0;

  constructor(
    private readonly slotTimeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(slotTimeMs) || slotTimeMs < 1)
      throw new Error(`bad Solana slot time ${slotTimeMs}`);
    this.startMs = now();
  }

  /** The slot the wall clock (and any travel) says it is. */
  slotNow(): number {
    return Math.floor((this.now() - this.startMs) / this.slotTimeMs) + this.slotsAhead;
  }

  /** Unix seconds of a slot, as its block carries it. */
  blockTime(slot: number): number {
    const offset = [...this.offsets].reverse().find((o) => o.fromSlot <= slot)?.offsetMs ?? 0;
    return Math.floor((this.startMs + slot * this.slotTimeMs + offset) / 1000);
  }

  /** Chain time jumps to `unixMs` from the slot after `current` on (never backwards). */
  timeTravel(unixMs: number, current: number): void {
    const wallAtNext = this.startMs + (current + 1) * this.slotTimeMs;
    this.offsets.push({ fromSlot: current + 1, offsetMs: Math.max(0, unixMs - wallAtNext) });
  }

  /** From now on the chain is at `slot` at least (never backwards). */
  travelToSlot(slot: number, current: number): void {
    if (slot > current) this.slotsAhead += slot - current;
  }
}
