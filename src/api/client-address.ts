/**
 * Who a request comes from, for the sign-in throttle and the password gate: the address of the
 * socket, unless that socket is a trusted proxy (FLAGSTAFF_TRUSTED_PROXIES), whose
 * X-Forwarded-For then says who its client was. X-Forwarded-For is a list every proxy appends
 * its peer to, and anyone can send one of their own, so only its right end is believed: walking
 * from the right, the trusted proxies' own entries are skipped, and the first address that is
 * not a trusted proxy's is the client (a made-up entry the client put in front of it is never
 * reached). A peer that is no trusted proxy is the client, whatever its X-Forwarded-For says.
 */
import { BlockList, isIP } from "node:net";

/** The client's address of a request, from its socket's address and its X-Forwarded-For header. */
export type ClientAddress = (peer: string | null, forwardedFor: string | null) => string | null;

/**
 * An address as the rule compares it, or null when it is none: brackets and a port
 * (`[2001:db8::1]:443`, `192.0.2.1:80`), a zone (`%eth0`) and the IPv4-mapped form
 * (`::ffff:192.0.2.1`, how a dual-stack socket reports an IPv4 peer) removed, IPv6 in lower case.
 */
export function normalizeAddress(raw: string): string | null {
  let a = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(":"));
  a = a.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) a = mapped[1]!;
  return isIP(a) ? a : null;
}

/** The rule for a list of trusted proxies (addresses and CIDR ranges, checked by src/config.ts). */
export function clientAddressOf(trustedProxies: readonly string[]): ClientAddress {
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address = "", prefix] = entry.split("/");
    const type = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) trusted.addAddress(address, type);
    else trusted.addSubnet(address, Number(prefix), type);
  }
  const isTrusted = (a: string) => trusted.check(a, isIP(a) === 6 ? "ipv6" : "ipv4");

  return (peer, forwardedFor) => {
    const socket = peer === null ? null : normalizeAddress(peer);
    if (socket === null || trustedProxies.length === 0 || !isTrusted(socket)) return socket;
    // Several X-Forwarded-For headers arrive joined with ", ", in order.
    const hops = (forwardedFor ?? "").split(",");
    let client = socket;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalizeAddress(hops[i]!);
      // Not an address: nothing to its left can be believed; the last proxy's view stands.
      if (hop === null) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client;
  };
}
