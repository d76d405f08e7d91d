/**
 * The client's IP address (spec-map Decisions: Demo limit): the socket address, unless
 * `TRUST_PROXY` = N names how many proxies in front of the service to trust;
 * then the address N hops back in `X-Forwarded-For`. A header sent by an
 * untrusted peer (no TRUST_PROXY) changes nothing.
 */
export function clientIp(socketIp: string | undefined, forwardedFor: string | null, trustProxy: number | undefined): string {
  const socket = socketIp ?? "unknown";
  if (!trustProxy || !forwardedFor) return socket;
  const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
  const chain = [...hops, socket];
  // chain[-1] is our direct peer (proxy 1); each trusted proxy appended the address it saw.
  const idx = chain.length - 1 - trustProxy;
  return chain[Math.max(0, idx)] ?? socket;
}
