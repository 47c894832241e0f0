import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzip } from "node:zlib";
import type { Context, MiddlewareHandler } from "hono";
import { APPROVE_LINK, OPERATOR_PAGE_PATH } from "../protocol/ids.js";

/**
 * The web chat page (docs/clients.md, "Web page"), built by Vite into `dist/web` (`npm run build`,
 * or `npm start` when it is missing; never committed) and served here at `/` (and at `/approve/<id>` and
 * `/operator`, docs/operator-page.md). Only files that exist in that folder
 * are served, by exact path: nothing outside it can be named. Vite's hashed `assets/` are cached for
 * a year as immutable; `index.html` and other unhashed files are revalidated every time (`no-cache`
 * with an ETag), so a new build shows at the next load. Text files go gzipped to clients that accept
 * it (compressed once, kept in memory).
 */

/** Where the build lands: the repository's `dist/web` (this file is `src/http/static.ts`). */
export const WEB_DIST_DIR = fileURLToPath(new URL("../../dist/web/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".json", ".map", ".svg", ".txt"]);

/**
 * What the page may do, for every HTML answer: its own scripts and styles only (no CDN, no inline
 * script), requests to this origin only, no framing by other sites (a page that asks a wallet
 * to sign must not be overlaid), and no handle on it kept by a site that opened it (which could
 * later send that browser tab elsewhere; a wallet's own pop-up keeps its opener).
 */
export const PAGE_SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin-allow-popups",
};

interface WebFile {
  path: string;
  type: string;
  immutable: boolean;
  body?: Buffer;
  gzipped?: Buffer | undefined;
  etag?: string;
  /** The URL of its source map, when maps are served. */
  map?: string;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith(".")) // not the build's stamp
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join("/"));
}

const gzipAsync = (data: Buffer) =>
  new Promise<Buffer>((resolve, reject) =>
    gzip(data, { level: 9 }, (e, out) => (e ? reject(e) : resolve(out))),
  );

/** What `/` answers when the page was never built (a checkout without `npm install`, say). */
const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>x402 chat agent</title>
<body>
<h1>The web page is not built</h1>
<p>Run <code>npm run build</code> (or <code>npm run build:web</code>) in an install with the development
dependencies, then reload; <code>npm start</code> builds it there when it is missing.
The API works without it: <code>POST /api/chat</code> (docs/protocol.md).</p>`;

/** The files of the build by URL path; maps only when they are served, each named by its script. */
function webFiles(dir: string, paths: string[], sourceMaps: boolean): Map<string, WebFile> {
  const map = new Map<string, WebFile>();
  for (const path of paths) {
    const ext = extname(path);
    if (ext === ".map" && !sourceMaps) continue;
    map.set(`/${path}`, {
      path: join(dir, path),
      type: TYPES[ext] ?? "application/octet-stream",
      immutable: path.startsWith("assets/"),
    });
  }
  if (sourceMaps) {
    for (const [url, file] of map) if (map.has(`${url}.map`)) file.map = `${url}.map`;
  }
  return map;
}

/** One file's answer: 304 when the client has it, gzipped when it takes that, else as it is. */
async function answerFile(c: Context, file: WebFile): Promise<Response> {
  // Hashed assets never change; index.html (a few hundred bytes) is read afresh, so a rebuild
  // while the service runs is served at once.
  if (!file.body || !file.immutable) {
    const body = await readFile(file.path);
    if (!file.body || !body.equals(file.body)) {
      file.body = body;
      file.gzipped = undefined;
      file.etag = `"${createHash("sha1").update(body).digest("base64url")}"`;
    }
  }
  const headers: Record<string, string> = {
    "Content-Type": file.type,
    "Cache-Control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    ETag: file.etag ?? "",
    Vary: "Accept-Encoding",
    ...(file.type.startsWith("text/html") ? PAGE_SECURITY_HEADERS : { "X-Content-Type-Options": "nosniff" }),
    ...(file.map ? { SourceMap: file.map } : {}),
  };
  if (c.req.header("if-none-match") === file.etag) return c.body(null, 304, headers);
  const ext = extname(file.path);
  const acceptsGzip = /\bgzip\b/.test(c.req.header("accept-encoding") ?? "");
  if (acceptsGzip && COMPRESSIBLE.has(ext) && file.body.length > 1024) {
    file.gzipped ??= await gzipAsync(file.body);
    return c.body(new Uint8Array(file.gzipped), 200, { ...headers, "Content-Encoding": "gzip" });
  }
  return c.body(new Uint8Array(file.body), 200, headers);
}

/** The paths the page itself answers (GET and HEAD): the chat, the approval page, the operator page. */
export function isPagePath(path: string): boolean {
  return path === "/" || APPROVE_LINK.test(path) || OPERATOR_PAGE_PATH.test(path);
}

/** The page's middleware, and whether a path is one it answers to GET (for a 405's `Allow`). */
export type WebMiddleware = MiddlewareHandler & { serves(path: string): Promise<boolean> };

/**
 * Serve the built page from `dir`. A request for a path that is not one of its files goes on to
 * the next route (so `/api/*`, `/healthz` and the 404 answer are untouched). The folder is listed
 * on first use and again whenever a path is missing, so a rebuild while the service runs is served.
 */
export function serveWeb(
  dir: string = WEB_DIST_DIR,
  // Vite writes the maps without a reference in the scripts: served (and named to the browser by a
  // `SourceMap` header) only when asked for, not to every visitor (3.9 MB of our sources).
  { sourceMaps = process.env.SOURCE_MAPS === "1" }: { sourceMaps?: boolean } = {},
): WebMiddleware {
  let files: Map<string, WebFile> | undefined;
  let listing: Promise<Map<string, WebFile>> | undefined;
  const list = () => {
    listing ??= listFiles(dir)
      .catch(() => [])
      .then((paths) => {
        const map = webFiles(dir, paths, sourceMaps);
        files = map;
        listing = undefined;
        return map;
      });
    return listing;
  };

  const middleware: MiddlewareHandler = async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return next();
    // The approval page (`/approve/<paymentId>`) and the operator page (`/operator`) are the same
    // single-page app: index.html (the operator page asks for its token; the API guards the data).
    const page = isPagePath(c.req.path);
    const path = page ? "/index.html" : c.req.path;
    let file = (files ?? (await list())).get(path);
    if (!file && (path === "/index.html" || path.startsWith("/assets/"))) file = (await list()).get(path);
    if (file) {
      try {
        return await answerFile(c, file);
      } catch {
        files = undefined; // gone since it was listed (a rebuild): list again next time
      }
    }
    if (path === "/index.html") {
      return c.html(NOT_BUILT, 404, { "Cache-Control": "no-cache", ...PAGE_SECURITY_HEADERS });
    }
    return next();
  };
  const serves = async (path: string) => isPagePath(path) || (files ?? (await list())).has(path);
  return Object.assign(middleware, { serves });
}
