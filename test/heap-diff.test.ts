/**
 * The soak's heap diff (scripts/soak/heap-diff.ts): two snapshots (V8's format, written small by
 * hand) compared per constructor.
 */
import { describe, expect, it } from "vitest";
import { diffGroups, groupSnapshot } from "../scripts/soak/heap-diff.js";

/** A snapshot in V8's layout: flat nodes of [type, name, id, self_size, edge_count]. */
function snapshot(nodes: Array<[type: string, name: string, size: number]>) {
  const types = ["hidden", "array", "string", "object", "code", "closure"];
  const strings: string[] = [];
  const flat = nodes.flatMap(([type, name, size], id) => {
    if (!strings.includes(name)) strings.push(name);
    return [types.indexOf(type), strings.indexOf(name), id, size, 0];
  });
  return {
    snapshot: {
      meta: { node_fields: ["type", "name", "id", "self_size", "edge_count"], node_types: [types] },
    },
    nodes: flat,
    strings,
  };
}

describe("the soak's heap snapshots", () => {
  it("counts what grew between two snapshots, per constructor or kind, biggest first", () => {
    const a = groupSnapshot(
      snapshot([
        ["object", "Map", 32],
        ["string", "hello", 20],
        ["object", "Entry", 40],
      ]),
    );
    const b = groupSnapshot(
      snapshot([
        ["object", "Map", 32],
        ["string", "hello", 20],
        ["string", "world", 24],
        ["object", "Entry", 40],
        ["object", "Entry", 40],
        ["object", "Entry", 40],
        ["closure", "onTimeout", 56],
      ]),
    );
    expect(diffGroups(a, b)).toEqual([
      { key: "Entry", count: 2, size: 80, sizeB: 120 },
      { key: "onTimeout()", count: 1, size: 56, sizeB: 56 },
      { key: "(string)", count: 1, size: 24, sizeB: 44 },
      { key: "Map", count: 0, size: 0, sizeB: 32 },
    ]);
  });
});
