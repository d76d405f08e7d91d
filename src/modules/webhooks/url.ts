/**
 * Create/update-time URL rules (docs/spec-map.md, "Decisions", webhook bodies), on the WHATWG-normalised host; names
 * are checked again before every attempt, so this refuses only what is certainly blocked (docs/webhooks.md).
 */
import { RequestValidationError, type ValidationItem } from "../../lib/errors.ts";
import { classifyAddress, isConnectable, isIpLiteral } from "./delivery/address-guard.ts";

// The host grammar of the URL pattern: RFC 1123 names whose last label starts with a letter (WHATWG reads a numeric
// last label as IPv4), RFC 3986 IPv4 in dotted decimal without leading zeros (no octal or single-number forms) and
// IPv6 in hex groups (RFC 3986 without the embedded IPv4 forms, which Bun's URL parser reads only in part).
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H16 = "[0-9A-Fa-f]{1,4}";
const LS32 = `${H16}:${H16}`;
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  ...[1, 2, 3].map((n) => `(?:(?:${H16}:){0,${n}}${H16})?::(?:${H16}:){${4 - n}}${LS32}`),
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join("|");
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const TOP_LABEL = "[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const PORT = "(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])";
/**
 * The receiver URL rules a schema can state ({@link validateWebhookUrl} checks the rest: a public address): https;
 * a host name, `localhost` (loopback, the operator's choice), IPv4 or [IPv6], so no credentials; a port 1 to 65535;
 * no fragment, white space or control characters.
 */
export const WEBHOOK_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]://(?:(?:${LABEL}\\.)+${TOP_LABEL}\\.?|[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?(?:[/?][^#\\s\\u0000-\\u001F\\u007F-\\u009F]*)?$`;
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

const URL_RE = new RegExp(WEBHOOK_URL_PATTERN, "u");

/**
 * The URL rules as 422 items for a body not yet schema-checked (they replace the schema's item at `url`): the
 * address rules' message, else the pattern's in words (the pattern itself is 2,000 characters).
 */
export function webhookUrlProblems(
  body: unknown,
  allowCidrs: readonly string[],
  sandboxEchoUrl?: string,
): ValidationItem[] {
  const url = (body as { url?: unknown } | null | undefined)?.url;
  if (typeof url !== "string") return [];
  try {
    validateWebhookUrl(url, ["body", "url"], allowCidrs, sandboxEchoUrl);
    if (URL_RE.test(url)) return [];
    return [
      {
        loc: ["body", "url"],
        msg: "URL should be https:// with a host name (last label starting with a letter), a dotted-decimal IPv4 or a [hex IPv6] address, a port from 1 to 65535, and no white space, control characters or fragment",
        type: "string_pattern_mismatch",
      },
    ];
  } catch (err) {
    if (err instanceof RequestValidationError) return err.items;
    throw err;
  }
}
