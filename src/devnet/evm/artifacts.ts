import { readFileSync } from "node:fs";
import type { ArtifactFile } from "./compile.js";

/** Where `scripts/compile-token.ts` writes the compiled contracts (committed to the repo). */
export const artifactsPath = new URL("./artifacts.json", import.meta.url);

let cached: ArtifactFile | undefined;

/** Reads the committed compiler output once per process; start-up never runs solc. */
export function loadArtifacts(): ArtifactFile {
  cached ??= JSON.parse(readFileSync(artifactsPath, "utf8")) as ArtifactFile;
  return cached;
}
