/** The parsing kit of every courier adapter: accessors never throw; `parse*` throw only CourierError. */
import { XMLParser } from "fast-xml-parser";
import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { parseIsoLocal, type CourierZone, type LocalTime } from "./time.ts";
import type { StatusRule } from "./status-map.ts";
import { CourierError } from "./types.ts";
import type { RawCheckpoint, TrackingSnapshot } from "../../../domain/checkpoint.ts";

export type Obj = Record<string, unknown>;

/** `v` when it is a plain object, else `{}`. */
export const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/** `v`'s items as objects (non-objects become `{}`), or `[]` when `v` is not an array. */
export const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

/** Text of a leaf: a trimmed string, a number as written, an XML element's `#text`, else "". */
export function str(v: unknown): string {
  if (typeof v === "string") return v.trim();
  if (typeof v === "number") return String(v);
  if (typeof v === "object" && v !== null && "#text" in v) return str((v as Obj)["#text"]);
  return "";
}

export function asArray<T>(v: T | T[] | undefined | null): T[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

/**
 * The EDD's calendar date, `YYYY-MM-DD`, as written (a naive value read in `zone`); null when unreadable or before
 * 2000 (.NET / SQL Server "no date" placeholders such as `0001-01-01` are not estimates).
 */
export function estimateDate(v: unknown, zone: CourierZone = 0): string | null {
  const s = str(v);
  const date = s ? parseIsoLocal(s, zone)?.localDate : undefined;
  return date && date >= "2000-01-01" ? date : null;
}

/** JSON.parse that turns HTML error pages, truncated bodies and empty bodies into a backend error. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CourierError("backend", "courier sent a body that is not JSON");
  }
}

/** JSON.parse, or undefined for anything that is not JSON (reading an error body that may be HTML). */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Compiled checkers, one per schema (TypeBox's compiler is ~10× faster than `Value.Check` on event lists). */
const checkers = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checkerOf<S extends TSchema>(schema: S): TypeCheck<S> {
  let c = checkers.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    checkers.set(schema, c);
  }
  return c as TypeCheck<S>;
}

/** Checks an already parsed document against `schema`. @throws CourierError backend */
export function checkWire<S extends TSchema>(courier: string, schema: S, doc: unknown): Static<S> {
  const check = checkerOf(schema);
  if (check.Check(doc)) return doc;
  const first = check.Errors(doc).First();
  throw new CourierError(
    "backend",
    `${courier}: unexpected document${first ? ` (${first.path || "/"}: ${first.message})` : ""}`,
  );
}

/** The items of `list` that match `schema` (one malformed event is skipped, not fatal); [] for a non-array. */
export function validItems<S extends TSchema>(schema: S, list: unknown): Static<S>[] {
  const check = checkerOf(schema);
  return Array.isArray(list) ? list.filter((item): item is Static<S> => check.Check(item)) : [];
}

/** XML parsing: DOCTYPE/entity declarations are refused outright (no XXE, no billion laughs). */
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // The predefined entities and character references are decoded; a DOCTYPE is refused before parsing (below).
  processEntities: true,
  htmlEntities: true,
});

/** @throws CourierError backend for a DOCTYPE/ENTITY, a body that is not XML, or malformed XML */
export function parseXml(text: string): Obj {
  if (/<!DOCTYPE|<!ENTITY/i.test(text))
    throw new CourierError("backend", "courier XML with a DOCTYPE/ENTITY declaration refused");
  if (!text.trimStart().startsWith("<")) throw new CourierError("backend", "courier sent a body that is not XML");
  try {
    return xml.parse(text, true) as Obj;
  } catch {
    throw new CourierError("backend", "courier sent malformed XML");
  }
}

/**
 * Throws the classified error for a non-2xx status: 401 auth; 403 and 429 rate_limited (courier gateways answer a
 * spent quota or WAF block with 403: Delhivery documents it); 404 not_found unless `notFoundOn404: false`;
 * 408/504 timeout; else backend.
 */
export function throwForStatus(courier: string, status: number, opts: { notFoundOn404?: boolean } = {}): void {
  if (status >= 200 && status < 300) return;
  if (status === 401) throw new CourierError("auth", `${courier}: credentials refused (401)`, status);
  if (status === 403 || status === 429)
    throw new CourierError("rate_limited", `${courier}: throttled (${status})`, status);
  if (status === 404 && opts.notFoundOn404 !== false)
    throw new CourierError("not_found", `${courier}: not found (404)`, status);
  if (status === 408 || status === 504)
    throw new CourierError("timeout", `${courier}: upstream timeout (${status})`, status);
  throw new CourierError("backend", `${courier}: unexpected HTTP ${status}`, status);
}

export interface EventText {
  activity: string;
  location: string;
  rawCode: string | null;
  rawStatus: string | null;
  remark: string | null;
}

export function checkpoint(rule: StatusRule, when: LocalTime, e: EventText): RawCheckpoint {
  return {
    state: rule.state,
    subStatus: rule.sub ?? null,
    activity: e.activity,
    location: e.location,
    ...when,
    rawCode: e.rawCode,
    rawStatus: e.rawStatus,
    remark: e.remark,
  };
}

/** Maps every item and drops the ones the mapper refused (no time, unreadable). */
export function checkpointsOf<T>(
  items: readonly T[],
  toCheckpoint: (item: T) => RawCheckpoint | undefined,
): RawCheckpoint[] {
  const out: RawCheckpoint[] = [];
  for (const item of items) {
    const cp = toCheckpoint(item);
    if (cp) out.push(cp);
  }
  return out;
}

/** The newest checkpoint by UTC instant; `onTie` says which of equal times wins (each adapter's tests pin it). */
export function newestOf(
  cps: readonly RawCheckpoint[],
  onTie: "first-listed" | "last-listed",
): RawCheckpoint | undefined {
  let best: RawCheckpoint | undefined;
  for (const c of cps) if (!best || c.at > best.at || (onTie === "last-listed" && c.at === best.at)) best = c;
  return best;
}

export function summary(
  rule: StatusRule,
  raw: { rawCode: string | null; rawStatus: string | null; at: string | null },
): NonNullable<TrackingSnapshot["summary"]> {
  return { state: rule.state, subStatus: rule.sub ?? null, rawCode: raw.rawCode, rawStatus: raw.rawStatus, at: raw.at };
}

export const summaryFromCheckpoint = (c: RawCheckpoint) => ({
  state: c.state,
  subStatus: c.subStatus,
  rawCode: c.rawCode,
  rawStatus: c.rawStatus,
  at: c.at,
});
