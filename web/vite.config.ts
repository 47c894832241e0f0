import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The web chat page (docs/clients.md, "Web page"): built into dist/web (git-ignored) by
 * `npm run build` or `npm run build:web` (and by `npm start` when it is missing); the service
 * serves it at `/` (src/http/static.ts).
 * `npm run dev:web` serves it with hot reload and sends /api to the service on port 3000.
 */
const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * Chunk groups by package, first match wins. A group is cut into parts at `maxSize` (bytes of
 * source before minifying); the AI SDK's group is kept whole (about 170 KB minified): cut apart,
 * a class in one part extended a class of another that was not evaluated yet.
 */
const WHOLE = new Set(["ai"]);
const VENDOR_GROUPS: Array<[string, RegExp]> = [
  ["react", /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/],
  ["ai", /[\\/]node_modules[\\/](ai|@ai-sdk|@opentelemetry|@standard-schema|eventsource-parser)[\\/]/],
  ["zod", /[\\/]node_modules[\\/]zod[\\/]/],
  ["solana", /[\\/]node_modules[\\/](@solana|@wallet-standard)[\\/]/],
  ["evm", /[\\/]node_modules[\\/](viem|ox|abitype|@noble|@scure|@adraffy)[\\/]/],
  ["vendor", /[\\/]node_modules[\\/]/],
];

export default defineConfig({
  root,
  base: "/",
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    // Maps are written but not named in the scripts: the service serves them only with
    // SOURCE_MAPS=1 (src/http/static.ts), then through a `SourceMap` header.
    sourcemap: "hidden",
    // No chunk over 250 KB before gzip (docs/deploy.md, Chunk sizes): the packages in groups of
    // their own (cached across releases of the page), each cut below the limit. The page loads
    // them at once (module preload), over one connection to the service.
    chunkSizeWarningLimit: 250,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: VENDOR_GROUPS.map(([name, test], i) => ({
            name,
            test,
            priority: VENDOR_GROUPS.length - i,
            maxSize: WHOLE.has(name) ? 4_000_000 : 800_000,
          })),
        },
      },
    },
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:3000" },
  },
});
