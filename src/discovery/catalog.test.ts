import { describe, expect, it } from "vitest";
import { parseCatalog } from "./catalog.js";

describe("parseCatalog", () => {
  it("refuses what is not an array", () => {
    expect(parseCatalog({ services: [] })).toEqual({
      ok: false,
      problems: ["must be a JSON array of services"],
    });
  });

  it("accepts price as USD text, {usd}, {atomic} or null, and checks they agree", () => {
    const result = parseCatalog([
      { name: "A", url: "https://a.example/", price: "0.25" },
      { name: "B", url: "https://b.example/", price: { usd: "1" } },
      { name: "C", url: "https://c.example/", price: null },
      { name: "D", url: "https://d.example/" },
    ]);
    expect(result.ok && result.services.map((s) => s.price)).toEqual([
      { usd: "0.25", atomic: "250000" },
      { usd: "1.00", atomic: "1000000" },
      null,
      null,
    ]);
    const disagree = parseCatalog([
      { name: "E", url: "https://e.example/", price: { usd: "1", atomic: "5" } },
    ]);
    expect(disagree).toEqual({ ok: false, problems: ['entry 0 ("E"): price: usd and atomic disagree'] });
  });
});
