/**
 * Create/update-time URL rules (docs/spec-map.md, "Decisions", webhook bodies), on the WHATWG-normalised host; names
 * are checked again before every attempt, so this refuses only what is certainly blocked (docs/webhooks.md).
 */
import { RequestValidationError, type ValidationItem } from "../../errors.ts";
import { classifyAddress, isConnectable, isIpLiteral } from "./delivery/address-guard.ts";

/** The normalised URL to store (`sandboxEchoUrl` may be loopback); throws RequestValidationError at `loc`. */
export function validateWebhookUrl(
  raw: string,
  loc: (string | number)[],
  allowCidrs: readonly string[],
  sandboxEchoUrl?: string,
): string {
  const fail = (type: string, msg: string): never => {
    const item: ValidationItem = { loc, msg, type };
    throw new RequestValidationError([item]);
  };
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return fail("url_parsing", "Input should be a valid URL");
  }
  if (u.protocol !== "https:") fail("url_scheme", "URL scheme should be 'https'");
  // Port 0 is no port a receiver can listen on (the URL parser accepts it).
  if (u.port === "0") fail("value_error", "URL port should be between 1 and 65535");
  if (u.username || u.password) fail("value_error", "URL must not contain a user name or password");
  if (u.hash || raw.includes("#")) fail("value_error", "URL must not contain a fragment");
  if (sandboxEchoUrl !== undefined && u.toString() === sandboxEchoUrl) return sandboxEchoUrl;
  const host = u.hostname;
  if (!host) fail("url_parsing", "URL must have a host");
  if (isIpLiteral(host)) {
    const c = classifyAddress(host, allowCidrs);
    if (!isConnectable(c)) fail("value_error", `URL host must be a host name or a public IP address (${host} is ${c})`);
  } else {
    const name = host.replace(/\.+$/, "").toLowerCase();
    if (name === "localhost" || name.endsWith(".localhost")) {
      if (!isConnectable(classifyAddress("127.0.0.1", allowCidrs)))
        fail("value_error", "URL host must be a host name or a public IP address (localhost is loopback)");
    } else if (!name.includes(".") || host.includes(".."))
      fail("value_error", "URL host must be a fully qualified domain name");
  }
  return u.toString();
}

/** The URL rules as 422 items for a body not yet schema-checked (reported with the schema's items). */
export function webhookUrlProblems(
  body: unknown,
  allowCidrs: readonly string[],
  sandboxEchoUrl?: string,
): ValidationItem[] {
  const url = (body as { url?: unknown } | null | undefined)?.url;
  if (typeof url !== "string") return [];
  try {
    validateWebhookUrl(url, ["body", "url"], allowCidrs, sandboxEchoUrl);
    return [];
  } catch (err) {
    if (err instanceof RequestValidationError) return err.items;
    throw err;
  }
}
