/** The client's IP address (spec-map Decisions: Demo limit), normalised with ipaddr.js; see `TRUST_PROXY`. */
import ipaddr from "ipaddr.js";

/** Longest text kept from an address that does not parse (a misconfigured proxy's header), characters. */
const MAX_UNPARSED_CHARS = 64;

/** `text` as a canonical address (port and zone dropped, IPv4-mapped IPv6 as IPv4), or undefined. */
export function normaliseAddress(text: string): string | undefined {
  let s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed?.[1]) s = bracketed[1];
  else if (/^[^:]+:\d{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  if (!ipaddr.isValid(s)) return undefined;
  const addr = ipaddr.process(s); // IPv4-mapped IPv6 → IPv4
  return addr.kind() === "ipv6" ? new ipaddr.IPv6((addr as ipaddr.IPv6).parts).toString() : addr.toString();
}

/** The key a per-address limit counts under: IPv4 itself, IPv6 its /64 (one customer network). */
export function addressLimitKey(ip: string): string {
  if (!ipaddr.IPv6.isValid(ip) || ipaddr.IPv4.isValid(ip)) return ip;
  const parts = ipaddr.IPv6.parse(ip).parts.slice(0, 4).concat([0, 0, 0, 0]);
  return `${new ipaddr.IPv6(parts).toString()}/64`;
}

/** The client's address, normalised; `"unknown"` without a socket address, the shortened text when not an address. */
export function clientIp(
  socketIp: string | undefined,
  forwardedFor: string | null,
  trustProxy: number | undefined,
): string {
  const socket = socketIp ?? "unknown";
  let chosen = socket;
  if (trustProxy && forwardedFor) {
    const hops = forwardedFor
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const chain = [...hops, socket];
    // chain[-1] is our direct peer (proxy 1); each trusted proxy appended the address it saw.
    const idx = chain.length - 1 - trustProxy;
    chosen = chain[Math.max(0, idx)] ?? socket;
  }
  return normaliseAddress(chosen) ?? chosen.trim().slice(0, MAX_UNPARSED_CHARS);
}
