import { describe, expect, it } from "vitest";
import { untrustedData } from "./outputs.js";

const answer = (text: string, contentType = "application/json") => ({
  status: 200,
  headers: new Headers({ "content-type": contentType }),
  url: "https://api.example.com/data",
  body: new TextEncoder().encode(text),
  truncated: false,
  method: "GET",
});

describe("a service's answer as data for the model", () => {
  it("is the parsed JSON when it fits the bound", () => {
    expect(untrustedData(answer('{"temp":21}'))).toEqual({
      untrusted: true,
      contentType: "application/json",
      body: { temp: 21 },
      truncated: false,
    });
  });

  // A black-box review: a JSON answer of about 1 MB reached the model whole, marked truncated.
  it("is the bounded text when the JSON is longer than the bound", () => {
    const long = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => `item ${i}`) });
    const data = untrustedData(answer(long));
    expect(data.truncated).toBe(true);
    expect(data.body).toBe(long.slice(0, 8000));
  });

  it("is the bounded text for other types", () => {
    const data = untrustedData(answer("x".repeat(9000), "text/plain"));
    expect(data).toMatchObject({ body: "x".repeat(8000), truncated: true });
  });
});
