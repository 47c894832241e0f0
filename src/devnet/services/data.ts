import { createHash } from "node:crypto";

/** Every answer carries this, so no one mistakes demo output for real data. */
export const DEMO_NOTE = "Simulated demo data from the local x402 devnet; not real-world information.";

/**
 * A deterministic pseudo-random source seeded by a string: the same input always yields the
 * same answer, which keeps demos reproducible and tests exact.
 */
export class SeededRandom {
  private counter = 0;
  constructor(private readonly seed: string) {}

  /** A float in [0, 1). */
  next(): number {
    const digest = createHash("sha256")
      .update(`${this.seed}#${this.counter++}`)
      .digest();
    return digest.readUInt32BE(0) / 2 ** 32;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  round(value: number, digits: number): number {
    const f = 10 ** digits;
    return Math.round(value * f) / f;
  }
}

const CONDITIONS = ["sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "foggy", "snow"];

export function weather(city: string) {
  const r = new SeededRandom(`weather:${city.trim().toLowerCase()}`);
  const temperatureC = r.int(-10, 35);
  return {
    city,
    temperatureC,
    temperatureF: Math.round((temperatureC * 9) / 5 + 32),
    conditions: r.pick(CONDITIONS),
    humidityPct: r.int(20, 95),
    windKph: r.int(0, 60),
    forecast: [1, 2, 3].map((day) => ({
      day,
      highC: temperatureC + r.int(-3, 5),
      conditions: r.pick(CONDITIONS),
    })),
    demo: true,
    note: DEMO_NOTE,
  };
}

export function cryptoPrice(symbol: string) {
  const s = symbol.trim().toUpperCase();
  const r = new SeededRandom(`price:${s}`);
  const magnitude = r.int(-2, 5);
  const priceUsd = r.round((1 + r.next() * 9) * 10 ** magnitude, 4);
  return {
    symbol: s,
    priceUsd,
    change24hPct: r.round(r.next() * 20 - 10, 2),
    volume24hUsd: Math.round(priceUsd * r.int(10_000, 50_000_000)),
    demo: true,
    note: DEMO_NOTE,
  };
}

const SUBJECTS = ["Regulators", "Researchers", "Start-ups", "Investors", "City officials", "Engineers"];
const VERBS = ["unveil", "debate", "question", "accelerate", "pause", "rethink"];
const OBJECTS = ["new standards", "a pilot program", "record funding", "an open dataset", "a bold roadmap"];

export function news(topic: string) {
  const t = topic.trim();
  const r = new SeededRandom(`news:${t.toLowerCase()}`);
  const headlines = Array.from({ length: 5 }, (_, i) => ({
    id: `${t.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${i + 1}`,
    title: `${r.pick(SUBJECTS)} ${r.pick(VERBS)} ${r.pick(OBJECTS)} in ${t}`,
    source: r.pick(["Devnet Daily", "Loopback Times", "The Local Ledger"]),
    minutesAgo: r.int(1, 600),
  }));
  return { topic: t, headlines, demo: true, note: DEMO_NOTE };
}

export function sentiment(text: string) {
  const r = new SeededRandom(`sentiment:${text}`);
  const score = r.round(r.next() * 2 - 1, 3);
  return {
    label: score > 0.2 ? "positive" : score < -0.2 ? "negative" : "neutral",
    score,
    characters: text.length,
    demo: true,
    note: DEMO_NOTE,
  };
}

export function premiumReport(topic: string) {
  const t = topic.trim();
  const r = new SeededRandom(`report:${t.toLowerCase()}`);
  return {
    topic: t,
    title: `Deep-dive report: ${t}`,
    summary: `An in-depth (simulated) analysis of ${t}, with outlook and risks.`,
    sections: ["Market overview", "Key players", "Risks", "Outlook"].map((heading) => ({
      heading,
      confidencePct: r.int(40, 95),
      keyFigure: r.round(r.next() * 1000, 1),
    })),
    rating: r.pick(["overweight", "neutral", "underweight"]),
    demo: true,
    note: DEMO_NOTE,
  };
}
