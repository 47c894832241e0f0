import { describe, expect, it } from "vitest";
import { allowedMethods } from "./allow.js";

/** The routes as Hono lists them: middleware (`ALL`), the page's catch-all, parameters. */
const ROUTES = [
  { method: "ALL", path: "/*" },
  { method: "GET", path: "/api/payments" },
  { method: "GET", path: "/api/payments/:id" },
  { method: "POST", path: "/api/auth/wallet" },
  { method: "DELETE", path: "/api/auth/wallet" },
  { method: "POST", path: "/api/tabs/:tabId/fund" },
  { method: "GET", path: "/*" },
];

describe("the methods a path is served with", () => {
  it("reads them from the routes, parameters matching one segment; GET brings HEAD", () => {
    expect(allowedMethods(ROUTES, "/api/payments")).toEqual(["GET", "HEAD"]);
    expect(allowedMethods(ROUTES, "/api/payments/pay_1")).toEqual(["GET", "HEAD"]);
    expect(allowedMethods(ROUTES, "/api/auth/wallet")).toEqual(["DELETE", "POST"]);
    expect(allowedMethods(ROUTES, "/api/tabs/tab_1/fund")).toEqual(["POST"]);
  });

  it("says nothing of a path only middleware or the catch-all would take: that is a 404", () => {
    expect(allowedMethods(ROUTES, "/nope")).toEqual([]);
    expect(allowedMethods(ROUTES, "/api/payments/pay_1/more")).toEqual([]);
    expect(allowedMethods(ROUTES, "/api/tabs//fund")).toEqual([]);
    expect(allowedMethods(ROUTES, "/api/paymentsX")).toEqual([]);
    // The router does not serve a trailing slash: 405 naming the very method used would be a lie.
    expect(allowedMethods(ROUTES, "/api/payments/")).toEqual([]);
    expect(allowedMethods(ROUTES, "/api/auth/wallet/")).toEqual([]);
  });
});
