/**
 * npm runs this after `npm install` (the `postinstall` script, through tsx): it prepares what the
 * first `npm start` would otherwise do itself, slowly, so that start is as quick as later ones:
 * the compiled service, dist/main.js (scripts/build.mjs), and the PGlite template a new data
 * directory is copied from (src/store/template.ts), and the clients: the SDK with its type
 * declarations and the terminal chat (scripts/build-client.mjs). All run at once. It never fails the install:
 * whatever it could not prepare, `npm start` still does (builds; runs initdb, as before).
 */
import { createPgliteTemplate } from "../src/store/template.ts";
import { ensureWebBuilt } from "../web/build.mjs";
import { ensureBuilt } from "./build.mjs";
import { ensureClientBuilt } from "./build-client.mjs";

const started = performance.now();
const note = (line) => process.stderr.write(`postinstall: ${line}\n`);
const [built, template, clients, web] = await Promise.allSettled([
  ensureBuilt(note),
  createPgliteTemplate(),
  ensureClientBuilt({ types: true }),
  ensureWebBuilt(note),
]);
if (built.status === "rejected") note(`dist/main.js not built (npm start will build it): ${built.reason}`);
if (template.status === "rejected")
  note(`no PGlite template (a new database runs initdb): ${template.reason}`);
if (clients.status === "rejected")
  note(`clients not built (the chat builds its own on first run): ${clients.reason}`);
if (web.status === "rejected")
  note(`web page not built (it needs the dev dependencies; npm run build:web): ${web.reason}`);
note(`ready to start in ${Math.round(performance.now() - started)} ms`);
