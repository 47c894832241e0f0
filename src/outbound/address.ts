import { isIPv4, isIPv6 } from "node:net";

/**
 * Classifies IP addresses for the SSRF guard (docs/payments.md, "Server-side requests"). Pure functions over the address
 * text, so every range is unit-tested without any network. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside, so `::ffff:127.0.0.1`
 * is loopback like `127.0.0.1`. Forms that hide an IPv4 address where it cannot be read back for sure
 * (local-use NAT64 `64:ff9b:1::/48`, Teredo and the rest of the IETF's `2001::/23`) are refused.
 */

/** Why an address is not a public unicast destination, or null when it is. */
export type AddressClass =
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "shared-cgnat"
  | "multicast"
  | "reserved"
  | "documentation";

type Range = readonly [base: bigint, prefix: number, kind: AddressClass];

const V4_RANGES: readonly (readonly [string, number, AddressClass])[] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared-cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const V6_RANGES: readonly (readonly [string, number, AddressClass])[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["64:ff9b:1::", 48, "reserved"], // local-use NAT64 (RFC 8215): any IPv4 address, in any layout
  ["100::", 64, "reserved"],
  ["2001::", 23, "reserved"], // IETF protocol assignments, Teredo 2001::/32 among them
  ["2001:db8::", 32, "documentation"],
  ["3fff::", 20, "documentation"],
  ["5f00::", 16, "reserved"], // SRv6 segment identifiers
  ["fc00::", 7, "private"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

const v4Table: Range[] = V4_RANGES.map(([a, p, k]) => [ipv4ToBigInt(a), p, k]);
const v6Table: Range[] = V6_RANGES.map(([a, p, k]) => [ipv6ToBigInt(a), p, k]);

function inRange(value: bigint, bits: number, [base, prefix]: Range): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Parses any valid IPv6 text (with `::` and an optional trailing dotted quad) to 128 bits. */
function ipv6ToBigInt(address: string): bigint {
  let text = address.split("%")[0] ?? address; // drop a zone id such as fe80::1%eth0
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headParts = head === "" ? [] : head.split(":");
  const tailParts = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headParts.length - tailParts.length;
  const groups = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...tailParts];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function classifyV4(value: bigint): AddressClass | null {
  if (value === 0xffffffffn) return "multicast"; // limited broadcast
  for (const range of v4Table) if (inRange(value, 32, range)) return range[2];
  return null;
}

/**
 * The class of a literal IP address, or null for a public unicast address. Text that is not an IP
 * address is "reserved": the caller asked about something it cannot vouch for, so it is refused.
 */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return classifyV4(ipv4ToBigInt(bare));
  if (!isIPv6(bare)) return "reserved";
  const value = ipv6ToBigInt(bare);
  const low32 = value & 0xffffffffn;
  // IPv4-mapped ::ffff:0:0/96 and the deprecated IPv4-compatible ::/96 (but not :: and ::1 themselves).
  if (value >> 32n === 0xffffn || (value >> 32n === 0n && value > 1n)) return classifyV4(low32);
  // IPv4-translated ::ffff:0:0:0/96 (SIIT).
  if (value >> 32n === 0xffff0000n) return classifyV4(low32);
  // NAT64 well-known prefix 64:ff9b::/96.
  if (value >> 32n === 0x64ff9b0000000000000000n) return classifyV4(low32);
  // 6to4 2002:V4ADDR::/48.
  if (value >> 112n === 0x2002n) return classifyV4((value >> 80n) & 0xffffffffn);
  for (const range of v6Table) if (inRange(value, 128, range)) return range[2];
  return null;
}
