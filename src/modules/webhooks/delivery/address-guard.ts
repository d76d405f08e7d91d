/**
 * The webhook address check (spec: Events, Delivery rules 3): every resolved address is classified with `ipaddr.js`
 * after unwrapping embedded IPv4; only global unicast passes (docs/webhooks.md#address-check).
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** `public` and `allowed` may be connected to; every other value blocks the delivery. */
export type AddressClass =
  | "public"
  | "allowed"
  | "invalid"
  | "unspecified"
  | "loopback"
  | "private"
  | "linkLocal"
  | "carrierGradeNat"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "uniqueLocal"
  | "teredo";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (injectable: tests never touch real DNS). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`getaddrinfo` via `dns.promises.lookup`, `all: true`). */
export const systemResolver: Resolver = async (host) => {
  const rows = await lookup(host, { all: true, verbatim: true });
  return rows.map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));
};

/** How long a host's resolved addresses are reused, ms (getaddrinfo reports no TTL; 30 s follows a moved receiver quickly). */
export const DNS_CACHE_TTL_MS = 30_000;

export interface CachingResolverOptions {
  /** Reuse window of a successful answer, ms (default {@link DNS_CACHE_TTL_MS}). */
  ttlMs?: number;
  /** Hosts kept at most, least recently resolved out first (default 1,000). */
  maxHosts?: number;
  /** Clock in ms (default `performance.now`). */
  now?: () => number;
}

/** Wraps `inner` with a TTL cache of successful answers and one lookup in flight per host. */
export function cachingResolver(inner: Resolver, opts: CachingResolverOptions = {}): Resolver {
  const ttl = opts.ttlMs ?? DNS_CACHE_TTL_MS;
  const max = opts.maxHosts ?? 1_000;
  const now = opts.now ?? (() => performance.now());
  const cache = new Map<string, { at: number; addrs: ResolvedAddress[] }>();
  const inFlight = new Map<string, Promise<ResolvedAddress[]>>();
  return (host) => {
    const key = host.toLowerCase();
    const hit = cache.get(key);
    if (hit && now() - hit.at < ttl) return Promise.resolve(hit.addrs);
    const running = inFlight.get(key);
    if (running) return running;
    const p = inner(host)
      .then((addrs) => {
        cache.delete(key);
        if (addrs.length > 0) cache.set(key, { at: now(), addrs });
        const oldest = cache.size > max ? cache.keys().next() : undefined;
        if (oldest && !oldest.done) cache.delete(oldest.value);
        return addrs;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, p);
    return p;
  };
}

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv4 ranges ipaddr.js names, mapped to our classes; `unicast` is the only public one. */
const V4_CLASS: Record<string, AddressClass> = {
  unicast: "public",
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "linkLocal",
  loopback: "loopback",
  carrierGradeNat: "carrierGradeNat",
  private: "private",
  reserved: "reserved",
  as112: "reserved",
  amt: "reserved",
};

/** The IPv4 address embedded in an IPv6 translation/tunnel form, if any. */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const b = a.toByteArray();
  const range = a.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return new ipaddr.IPv4(b.slice(12, 16));
  if (range === "6to4") return new ipaddr.IPv4(b.slice(2, 6));
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291 2.5.5.1): first 96 bits zero, not :: or ::1.
  if (b.slice(0, 12).every((x) => x === 0) && range !== "unspecified" && range !== "loopback")
    return new ipaddr.IPv4(b.slice(12, 16));
  return undefined;
}

function classifyParsed(a: Addr): AddressClass {
  if (a.kind() === "ipv4") return V4_CLASS[(a as ipaddr.IPv4).range()] ?? "reserved";
  const v6 = a as ipaddr.IPv6;
  const inner = embeddedV4(v6);
  if (inner) {
    const c = classifyParsed(inner);
    return c;
  }
  switch (v6.range() as string) {
    case "unspecified":
      return "unspecified";
    case "loopback":
      return "loopback";
    case "linkLocal":
    case "deprecatedSiteLocal":
      return "linkLocal";
    case "multicast":
      return "multicast";
    case "uniqueLocal":
      return "uniqueLocal";
    case "teredo":
      return "teredo";
    case "unicast":
      // Only 2000::/3 is allocated global unicast; everything else (e.g. the rest of ::/8) is reserved.
      return v6.match(ipaddr.IPv6.parse("2000::"), 3) ? "public" : "reserved";
    default:
      return "reserved";
  }
}

const parsedLists = new WeakMap<readonly string[], [Addr, number][]>();

function parseCidrs(allow: readonly string[]): [Addr, number][] {
  const known = parsedLists.get(allow);
  if (known) return known;
  const out: [Addr, number][] = [];
  for (const c of allow) {
    try {
      out.push(ipaddr.parseCIDR(c));
    } catch {
      // Config validation already rejects malformed CIDRs; ignore anything left.
    }
  }
  parsedLists.set(allow, out);
  return out;
}

function inAllowList(a: Addr, allow: [Addr, number][]): boolean {
  const forms: Addr[] = [a];
  if (a.kind() === "ipv6") {
    const inner = embeddedV4(a as ipaddr.IPv6);
    if (inner) forms.push(inner);
  }
  return forms.some((f) => allow.some(([net, bits]) => net.kind() === f.kind() && f.match(net as never, bits)));
}

/**
 * Classifies one IP address (no I/O; spec: Delivery rules 3): `public`, `allowed` (in `allow`), or the blocked class.
 * Only dotted-quad IPv4 and standard IPv6 parse (`invalid` otherwise; the URL parser normalises other notations).
 */
export function classifyAddress(ip: string, allow: readonly string[] = []): AddressClass {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  let a: Addr;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) a = ipaddr.IPv4.parse(bare);
  else if (ipaddr.IPv6.isValid(bare)) a = ipaddr.IPv6.parse(bare);
  else return "invalid";
  if (allow.length > 0 && inAllowList(a, parseCidrs(allow))) return "allowed";
  return classifyParsed(a);
}

export const isConnectable = (c: AddressClass) => c === "public" || c === "allowed";

// The same few addresses are checked before every attempt. Bounded; emptied when full.
const knownClasses = new WeakMap<readonly string[], Map<string, AddressClass>>();
const KNOWN_CLASSES_MAX = 4_096;

/** {@link classifyAddress}, remembered per allow list. */
function classifyKnown(ip: string, allow: readonly string[]): AddressClass {
  let known = knownClasses.get(allow);
  if (!known) {
    known = new Map();
    knownClasses.set(allow, known);
  }
  let c = known.get(ip);
  if (c === undefined) {
    if (known.size >= KNOWN_CLASSES_MAX) known.clear();
    c = classifyAddress(ip, allow);
    known.set(ip, c);
  }
  return c;
}

/** True when `host` (a URL hostname, IPv6 possibly in brackets) is an IP literal. */
export function isIpLiteral(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || ipaddr.IPv6.isValid(bare);
}

const literals = new Map<string, ResolvedAddress[] | null>();

function literalOf(host: string): ResolvedAddress[] | null {
  let known = literals.get(host);
  if (known === undefined) {
    const bare = host.replace(/^\[|\]$/g, "");
    known = isIpLiteral(bare) ? [{ address: bare, family: bare.includes(":") ? 6 : 4 }] : null;
    if (literals.size >= KNOWN_CLASSES_MAX) literals.clear();
    literals.set(host, known);
  }
  return known;
}

export type GuardResult =
  | { ok: true; address: ResolvedAddress }
  | { ok: false; reason: "dns"; detail: string }
  | { ok: false; reason: "address_blocked"; detail: string };

/** Resolves `host` and vets EVERY address (one blocked blocks the host); returns the first, to pin the connection to. */
export async function checkHost(host: string, allow: readonly string[], resolver: Resolver): Promise<GuardResult> {
  const literal = literalOf(host);
  let addrs: ResolvedAddress[];
  if (literal) addrs = literal;
  else {
    const bare = host.replace(/^\[|\]$/g, "");
    try {
      addrs = await resolver(bare.replace(/\.$/, ""));
    } catch (e) {
      return {
        ok: false,
        reason: "dns",
        detail: `host does not resolve (${(e as { code?: string }).code ?? "error"})`,
      };
    }
    if (addrs.length === 0) return { ok: false, reason: "dns", detail: "host does not resolve" };
  }
  for (const a of addrs) {
    const c = classifyKnown(a.address, allow);
    if (!isConnectable(c))
      return { ok: false, reason: "address_blocked", detail: `${host} resolves to a ${c} address` };
  }
  const [first] = addrs;
  if (!first) return { ok: false, reason: "dns", detail: "host does not resolve" };
  return { ok: true, address: first };
}
