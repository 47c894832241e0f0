/**
 * `npm run build`: everything a production install runs, built now, in a full install (development
 * dependencies present): the service (dist/main.js, scripts/build.mjs), the clients (the SDK
 * package in packages/client/dist and the terminal chat in dist/cli, scripts/build-client.mjs) and
 * the web page (dist/web, web/build.mjs). Each is skipped when it is up to date. Then
 * `npm prune --omit=dev` leaves a tree that runs (docs/deploy.md, Production install).
 */
import { ensureWebBuilt } from "../web/build.mjs";
import { ensureBuilt } from "./build.mjs";
import { ensureClientBuilt } from "./build-client.mjs";

const started = performance.now();
const log = (line) => process.stderr.write(`${line}\n`);
const results = await Promise.allSettled([
  ensureBuilt(log),
  ensureClientBuilt({ types: true }).then((built) => {
    for (const line of built) log(`built ${line}`);
  }),
  ensureWebBuilt(log),
]);
const failed = results.flatMap((r, i) =>
  r.status === "rejected" ? [`${["dist/main.js", "the clients", "dist/web"][i]}: ${r.reason}`] : [],
);
for (const line of failed) log(`build failed: ${line}`);
if (failed.length > 0) process.exit(1);
log(
  `built (or up to date): dist/main.js, packages/client/dist, dist/cli, dist/web in ${Math.round(performance.now() - started)} ms`,
);
