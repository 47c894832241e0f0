/**
 * The methods a path is served with, read from the app's own routes: a request with another method
 * is answered 405 with `Allow` (RFC 9110, 15.5.6), not 404 as for a path nobody serves. Catch-all
 * routes (the page's `*`) and middleware (`ALL`) say nothing about a path: the caller names what
 * such a route serves there in `also`.
 */
export function allowedMethods(
  routes: readonly { method: string; path: string }[],
  path: string,
  also: readonly string[] = [],
): string[] {
  const methods = new Set<string>(also);
  for (const route of routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    if (patternOf(route.path).test(path)) methods.add(route.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

const patterns = new Map<string, RegExp>();

/** `/api/payments/:id` as a regular expression matching one path segment per parameter. */
function patternOf(route: string): RegExp {
  let pattern = patterns.get(route);
  if (!pattern) {
    const parts = route.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : escapeRegExp(part)));
    // Exact, as the router matches: `/healthz/` is not `/healthz`.
    pattern = new RegExp(`^${parts.join("/")}$`);
    patterns.set(route, pattern);
  }
  return pattern;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
