import { describe, expect, it } from "vitest";
import { loadArtifacts } from "./artifacts.js";
import { compileContracts } from "./compile.js";

describe("the committed contract artifacts", () => {
  it("match what solc compiles from contracts/ (run `npx tsx scripts/compile-token.ts` if not)", () => {
    expect(loadArtifacts()).toEqual(compileContracts());
  }, 60_000);
});
