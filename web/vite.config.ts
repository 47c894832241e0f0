import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/**
 * The web chat page (docs/clients.md, "Web page"): built into dist/web (git-ignored) by
 * `npm run build:web`, which `npm install` runs; the service serves it at `/` (src/http/static.ts).
 * `npm run dev:web` serves it with hot reload and sends /api to the service on port 3000.
 */
const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    sourcemap: true,
    // viem, the AI SDK and React are most of it; one file loads faster than a waterfall here.
    chunkSizeWarningLimit: 2000,
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:3000" },
  },
});
