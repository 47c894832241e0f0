/**
 * The container's HEALTHCHECK (Dockerfile) and what `npm run check:image` runs against the started
 * tree: exit 0 when GET /readyz on this host's service answers 200 (the store, Redis and every
 * chain answered), 1 otherwise, within 3 s. `PORT` as the service reads it (default 3000).
 */
const port = process.env.PORT || "3000";
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
  await response.body?.cancel();
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
