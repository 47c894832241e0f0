/**
 * `tsx scripts/soak/heap-diff.ts A.heapsnapshot B.heapsnapshot [--top 30]`: what grew in the V8
 * heap (ArrayBuffers' backing stores included) from snapshot A to B (with A alone: its biggest) (as `npm run soak -- --heap-snapshots` writes them), per constructor
 * (objects, closures) or kind (strings, arrays, code, …): count and self size growth, biggest
 * first. Self size only (not what an object retains). The whole file is parsed at once: fine for
 * snapshots of a few hundred MB (Node's string limit is ~512 MB).
 */
import { readFileSync } from "node:fs";

export interface HeapGroup {
  count: number;
  size: number;
}

export interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: unknown[] } };
  nodes: number[];
  strings: string[];
}

/** Node kinds whose name is an instance's (a string's text, a closure's name): grouped by kind only. */
const BY_KIND = new Set([
  "string",
  "concatenated string",
  "sliced string",
  "number",
  "code",
  "hidden",
  "array",
]);

/** Count and self size per group: `Name` for objects, `Name()` for closures, `(kind)` otherwise. */
export function groupSnapshot(snap: Snapshot): Map<string, HeapGroup> {
  const fields = snap.snapshot.meta.node_fields;
  const stride = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = snap.snapshot.meta.node_types[0] as string[];
  const groups = new Map<string, HeapGroup>();
  for (let i = 0; i < snap.nodes.length; i += stride) {
    const type = types[snap.nodes[i + typeAt] as number] ?? "?";
    const name = snap.strings[snap.nodes[i + nameAt] as number] ?? "?";
    const key =
      type === "object"
        ? name
        : type === "closure"
          ? `${name}()`
          : BY_KIND.has(type)
            ? `(${type})`
            : `(${type}) ${name}`;
    const g = groups.get(key) ?? { count: 0, size: 0 };
    g.count++;
    g.size += snap.nodes[i + sizeAt] as number;
    groups.set(key, g);
  }
  return groups;
}

/** Growth from `a` to `b` per group, biggest self-size growth first. */
export function diffGroups(
  a: Map<string, HeapGroup>,
  b: Map<string, HeapGroup>,
): Array<{ key: string; count: number; size: number; sizeB: number }> {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys]
    .map((key) => {
      const x = a.get(key) ?? { count: 0, size: 0 };
      const y = b.get(key) ?? { count: 0, size: 0 };
      return { key, count: y.count - x.count, size: y.size - x.size, sizeB: y.size };
    })
    .sort((p, q) => q.size - p.size);
}

function load(file: string): Map<string, HeapGroup> {
  return groupSnapshot(JSON.parse(readFileSync(file, "utf8")) as Snapshot);
}

if (process.argv[1]?.endsWith("heap-diff.ts")) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf("--top");
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
  const [fileA, fileB] = args.filter((_, i) => i !== topAt && i !== topAt + 1);
  if (!fileA) throw new Error("usage: heap-diff.ts A.heapsnapshot [B.heapsnapshot] [--top 30]");
  // One snapshot alone: its biggest groups (growth from nothing).
  const a = fileB ? load(fileA) : new Map<string, HeapGroup>();
  const b = load(fileB ?? fileA);
  const total = (m: Map<string, HeapGroup>) => [...m.values()].reduce((s, g) => s + g.size, 0);
  const mb = (n: number) => (n / 1024 / 1024).toFixed(2);
  console.log(`self size: ${mb(total(a))} MB -> ${mb(total(b))} MB (${mb(total(b) - total(a))} MB)`);
  console.log("size growth MB | count growth | size in B MB | group");
  for (const d of diffGroups(a, b).slice(0, top))
    console.log(
      `${mb(d.size).padStart(14)} | ${String(d.count).padStart(12)} | ${mb(d.sizeB).padStart(12)} | ${d.key}`,
    );
}
