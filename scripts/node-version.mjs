/**
 * The Node.js this project runs on: package.json's `engines.node`, 22.12 or newer (22 and 24 LTS;
 * docs/deploy.md#node). `npm install` brings Node 22 itself (packages/node-runtime: the registry's
 * binary for the platform), so `npm start`, `npm run` and `npm test` run on it whatever the
 * system's Node is; a production install runs on the host's Node. Plain JavaScript, loaded before
 * anything else by src/start.mjs and scripts/postinstall.mjs.
 */
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
/** `[major, minor]` of the floor, from `engines.node` (">=22.12"). */
export const NODE_FLOOR = /** @type {[number, number]} */ (
  (/^>=(\d+)\.(\d+)/.exec(pkg.engines.node) ?? []).slice(1, 3).map(Number)
);

/** Why this Node cannot run the project, in words, or `undefined` when it can. */
export function nodeTooOld(version = process.versions.node) {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const [floorMajor, floorMinor] = NODE_FLOOR;
  if (major > floorMajor || (major === floorMajor && minor >= floorMinor)) return undefined;
  return (
    `Node ${version} (${process.execPath}) is older than the ${floorMajor}.${floorMinor} this service ` +
    "needs (package.json engines): `npm start` runs the Node that `npm install` puts in " +
    "node_modules/.bin (Linux x64 and arm64, macOS x64, Windows x64); elsewhere, and in a production " +
    "install, install Node 22 or 24 (docs/deploy.md#node)"
  );
}
