/** Helpers shared by adapters: HTTP status classification and defensive JSON/XML parsing. */
import { XMLParser } from "fast-xml-parser";
import { CourierError } from "./types.ts";

/**
 * Throws the classified error for a non-2xx status: 401 → auth, 404 → not_found,
 * 429 → rate_limited, 408/504 → timeout, other 4xx/5xx and 3xx → backend.
 * Returns normally for 2xx.
 */
export function classifyHttpStatus(courier: string, status: number, opts: { notFoundOn404?: boolean } = {}): void {
  if (status >= 200 && status < 300) return;
  if (status === 401) throw new CourierError("auth", `${courier}: credentials refused (401)`, status);
  if (status === 404 && opts.notFoundOn404 !== false) throw new CourierError("not_found", `${courier}: not found (404)`, status);
  if (status === 429) throw new CourierError("rate_limited", `${courier}: throttled (429)`, status);
  if (status === 408 || status === 504) throw new CourierError("timeout", `${courier}: upstream timeout (${status})`, status);
  throw new CourierError("backend", `${courier}: unexpected HTTP ${status}`, status);
}

/** JSON.parse that turns HTML error pages, truncated bodies and empty bodies into a backend error. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CourierError("backend", "courier sent a body that is not JSON");
  }
}

/**
 * XML parsing with fast-xml-parser: DOCTYPE/entity declarations are refused
 * outright (no XXE, no billion-laughs) — no courier API needs them.
 */
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: false,
  htmlEntities: false,
});

export function parseXml(text: string): Record<string, unknown> {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new CourierError("backend", "courier XML with a DOCTYPE/ENTITY declaration refused");
  if (!text.trimStart().startsWith("<")) throw new CourierError("backend", "courier sent a body that is not XML");
  try {
    return xml.parse(text, true) as Record<string, unknown>;
  } catch {
    throw new CourierError("backend", "courier sent malformed XML");
  }
}

/** A value that may be one item or an array (XML → JSON) as an array. */
export function asArray<T>(v: T | T[] | undefined | null): T[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}
