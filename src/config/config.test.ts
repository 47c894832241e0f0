import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./index.js";

describe("SIGNERS_FILE and the payment mode", () => {
  it("is refused at start with PAYMENTS=devnet (explicit or the default), naming the variable", () => {
    for (const env of [
      { SIGNERS_FILE: "signers.json" },
      { PAYMENTS: "devnet", SIGNERS_FILE: "signers.json" },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/SIGNERS_FILE: is used only with PAYMENTS=external/);
    }
  });

  it("is taken with PAYMENTS=external", () => {
    expect(loadConfig({ PAYMENTS: "external", SIGNERS_FILE: "signers.json" }).payments.signersFile).toBe(
      "signers.json",
    );
  });
});
