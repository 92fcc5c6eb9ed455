/**
 * Server-side request forgery guards for link scanning: which URLs may be fetched at all, and
 * which IP addresses a fetch may connect to. A link in reported content is chosen by whoever
 * wrote it, so without these checks a scan could reach the cloud metadata service, the
 * database admin page on localhost or anything else on the installation's private network.
 *
 * Addresses are judged after name resolution (see safe-fetch.ts, which also pins the
 * connection to the judged address); this file only knows about syntax and numbers.
 */
import { isIPv4, isIPv6 } from "node:net";

/** A link scan was refused before any connection was made; `reason` says why. */
export class ScanRefusedError extends Error {
  override readonly name = "ScanRefusedError";
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`refused to fetch ${url}: ${reason}`);
  }
}

/**
 * Parses a URL and refuses what a link scan must never fetch: other schemes (file:, ftp:,
 * data:, gopher: …), URLs carrying credentials and URLs without a host.
 *
 * WHATWG URL parsing already turns every numeric spelling of an IPv4 host into dotted quads
 * (`http://2130706433/`, `http://0x7f.1/`, `http://017700000001/`, `http://127.1/` all become
 * `127.0.0.1`), so the address check never has to understand those spellings itself.
 */
export function checkUrlSyntax(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ScanRefusedError(url, "not a valid URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ScanRefusedError(url, `scheme ${parsed.protocol.slice(0, -1)} is not scanned (only http and https)`);
  }
  // Credentials in a link are either a phishing trick or someone's secret; never send them.
  if (parsed.username !== "" || parsed.password !== "") {
    throw new ScanRefusedError(url, "URLs with credentials are not scanned");
  }
  if (parsed.hostname === "") throw new ScanRefusedError(url, "the URL has no host");
  return parsed;
}

/** The host of a URL as an address or name: IPv6 literals lose their brackets. */
export function bareHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * Why a fetch must not connect to `ip`, or null when it may. Anything that is not a valid IP
 * address is refused too: failing closed is the only safe answer for a guard.
 */
export function isForbiddenAddress(ip: string): string | null {
  // A zone index (fe80::1%eth0) only ever accompanies link-local addresses; judge the address.
  const address = ip.split("%")[0] ?? "";
  if (isIPv4(address)) {
    const value = parseIPv4(address);
    return value === null ? `${ip} is not an IP address` : forbiddenIPv4(value);
  }
  if (isIPv6(address)) {
    const groups = parseIPv6(address);
    return groups === null ? `${ip} is not an IP address` : forbiddenIPv6(groups);
  }
  return `${ip} is not an IP address`;
}

interface Range4 {
  base: number;
  bits: number;
  reason: string;
}

const v4 = (dotted: string, bits: number, reason: string): Range4 => ({
  base: parseIPv4(dotted) ?? 0,
  bits,
  reason,
});

// Everything that is not ordinary public unicast. Order matters only for the reason shown
// (the broadcast address also lies in 240/4).
const FORBIDDEN_V4: readonly Range4[] = [
  v4("255.255.255.255", 32, "the broadcast address"),
  v4("0.0.0.0", 8, "an unspecified address (0.0.0.0/8)"),
  v4("10.0.0.0", 8, "a private address (10/8)"),
  v4("100.64.0.0", 10, "a carrier-grade NAT address (100.64/10)"),
  v4("127.0.0.0", 8, "a loopback address (127/8)"),
  v4("169.254.0.0", 16, "a link-local address (169.254/16, cloud metadata lives here)"),
  v4("172.16.0.0", 12, "a private address (172.16/12)"),
  v4("192.0.0.0", 24, "an IETF protocol assignment (192.0.0/24)"),
  v4("192.0.2.0", 24, "a documentation address (192.0.2/24)"),
  v4("192.168.0.0", 16, "a private address (192.168/16)"),
  v4("198.18.0.0", 15, "a benchmarking address (198.18/15)"),
  v4("198.51.100.0", 24, "a documentation address (198.51.100/24)"),
  v4("203.0.113.0", 24, "a documentation address (203.0.113/24)"),
  v4("224.0.0.0", 4, "a multicast address (224/4)"),
  v4("240.0.0.0", 4, "a reserved address (240/4)"),
];

function forbiddenIPv4(value: number): string | null {
  for (const range of FORBIDDEN_V4) {
    if (inPrefix(value, range.base, range.bits)) return range.reason;
  }
  return null;
}

function inPrefix(value: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  const shift = 32 - bits;
  return value >>> shift === base >>> shift;
}

/** Dotted quad → unsigned 32-bit number (only the canonical form; URL parsing made it so). */
function parseIPv4(dotted: string): number | null {
  const parts = dotted.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** IPv6 text → eight 16-bit groups, expanding `::` and a trailing dotted IPv4 part. */
function parseIPv6(text: string): number[] | null {
  let source = text.toLowerCase();
  const lastColon = source.lastIndexOf(":");
  const last = source.slice(lastColon + 1);
  if (last.includes(".")) {
    // ::ffff:1.2.3.4 → ::ffff:102:304, so the rest only has to deal with hex groups.
    const embedded = parseIPv4(last);
    if (embedded === null) return null;
    source = `${source.slice(0, lastColon + 1)}${(embedded >>> 16).toString(16)}:${(embedded & 0xffff).toString(16)}`;
  }
  const halves = source.split("::");
  if (halves.length > 2) return null;
  const head = toGroups(halves[0] ?? "");
  const rest = toGroups(halves[1] ?? "");
  if (head === null || rest === null) return null;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1) return missing === 0 ? head : null;
  return missing < 1 ? null : [...head, ...new Array<number>(missing).fill(0), ...rest];
}

function toGroups(part: string): number[] | null {
  if (part === "") return [];
  const groups = part.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  return groups.some(Number.isNaN) ? null : groups;
}

function forbiddenIPv6(g: number[]): string | null {
  const at = (i: number): number => g[i] ?? 0;
  const ipv4At = (i: number): number => ((at(i) << 16) | at(i + 1)) >>> 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  const judgeEmbedded = (kind: string, value: number): string | null => {
    const reason = forbiddenIPv4(value);
    return reason === null ? null : `${kind} embedding ${formatIPv4(value)}, ${reason}`;
  };

  if (g.every((x) => x === 0)) return "the unspecified address (::)";
  if (zeroUpTo(7) && at(7) === 1) return "the loopback address (::1)";
  // ::ffff:a.b.c.d reaches a.b.c.d on dual-stack sockets: judge it as that IPv4 address.
  if (zeroUpTo(5) && at(5) === 0xffff) return judgeEmbedded("an IPv4-mapped address", ipv4At(6));
  // ::a.b.c.d (deprecated IPv4-compatible form) — some stacks still route it as IPv4.
  if (zeroUpTo(6)) return judgeEmbedded("an IPv4-compatible address", ipv4At(6));
  // 64:ff9b::/96: the well-known NAT64 prefix; a translator forwards to the embedded IPv4.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 0 && at(3) === 0 && at(4) === 0 && at(5) === 0) {
    return judgeEmbedded("a NAT64 address", ipv4At(6));
  }
  // 64:ff9b:1::/48 is for local-use NAT64 with a prefix length of the operator's choosing, so
  // where its IPv4 part sits is unknowable from here; it is not globally reachable: refuse it.
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return "a local-use NAT64 address (64:ff9b:1::/48)";
  // 2002::/16 (6to4) carries the IPv4 address of its relay in bits 16–47.
  if (at(0) === 0x2002) return judgeEmbedded("a 6to4 address", ipv4At(1));
  // 2001::/32 (Teredo): the server IPv4 in bits 32–63, the client IPv4 inverted in bits 96–127.
  if (at(0) === 0x2001 && at(1) === 0) {
    return judgeEmbedded("a Teredo address", ipv4At(2)) ?? judgeEmbedded("a Teredo address", ~ipv4At(6) >>> 0);
  }
  if (at(0) === 0x2001 && at(1) === 0x0db8) return "a documentation address (2001:db8::/32)";
  if (at(0) === 0x2001 && at(1) === 0x0002 && at(2) === 0) return "a benchmarking address (2001:2::/48)";
  if ((at(0) & 0xffc0) === 0xfe80) return "a link-local address (fe80::/10)";
  if ((at(0) & 0xffc0) === 0xfec0) return "a site-local address (fec0::/10)";
  if ((at(0) & 0xfe00) === 0xfc00) return "a unique-local address (fc00::/7)";
  if ((at(0) & 0xff00) === 0xff00) return "a multicast address (ff00::/8)";
  // Only 2000::/3 is allocated as global unicast; the rest (100::/64 discard, reserved blocks)
  // has no business being the address of a public web page.
  if ((at(0) & 0xe000) !== 0x2000) return "not a global unicast address (outside 2000::/3)";
  return null;
}

function formatIPv4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}
