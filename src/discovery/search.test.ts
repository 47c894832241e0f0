import { describe, expect, it } from "vitest";
import type { Entry } from "./entry.js";
import { rank } from "./search.js";

const entry = (name: string, tags: string[] = []): Entry => ({
  service: {
    name,
    description: `${name} as a service`,
    url: `https://api.example.com/${name.toLowerCase().replace(/\s+/g, "-")}`,
    method: "GET",
    price: null,
    networks: ["eip155:8453"],
    params: [],
  },
  tags,
});

describe("ranking services for a query", () => {
  const entries = [entry("Weather now", ["weather"]), entry("Site builder", ["website", "constructor"])];

  it("counts a synonym as its word", () => {
    expect(rank(entries, "rain in Paris").map((s) => s.name)).toEqual(["Weather now"]);
  });

  // A black-box review: "constructor" looked up the synonyms' Object and threw "not iterable",
  // so the chat's discovery ended `internal`.
  it.each(["website constructor", "toString", "__proto__ hasOwnProperty valueOf"])(
    "takes %j as words, not as an object's own names",
    (query) => {
      expect(() => rank(entries, query)).not.toThrow();
    },
  );

  it("still finds the service a word an object inherits names", () => {
    expect(rank(entries, "constructor").map((s) => s.name)).toEqual(["Site builder"]);
  });
});
