/** The shipments page's work (docs/dashboard.md): filters, follow from a list or CSV via `POST /v1/shipments`'s code, CSV export. */
import { Value } from "@sinclair/typebox/value";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import type { Db } from "../../db/client.ts";
import { MAX_REFERENCE_CHARS } from "../../domain/follow-data.ts";
import { isReasonCode, type ReasonCode } from "../../domain/ndr.ts";
import { WEBHOOK_SPELLING, type WebhookSpelling } from "../../domain/states.ts";
import { charCount } from "../../http/text.ts";
import type { AuthContext } from "../accounts/service.ts";
import { courierBySlug } from "../couriers/catalogue.ts";
import { guardCell, unguardCell } from "./csv-guard.ts";
import { followShipments, type FollowResult } from "../shipments/follow.ts";
import { FollowShipmentsBody, MAX_SHIPMENTS_PER_CALL, type ListShipmentsInput } from "../shipments/model.ts";
import { listShipments } from "../shipments/service.ts";
import type { StatsIndex } from "../predictions/stats.ts";
import { defined } from "../../lib/defined.ts";

const PAGE_ROWS = 50;
const STATES: ReadonlySet<string> = new Set(Object.values(WEBHOOK_SPELLING));

/** The page's filters as the merchant gave them (echoed back into the form); `q` is an AWB or a reference. */
export interface ShipmentFilters {
  q: string;
  state: string;
  courier: string;
  reason: string;
  /** "true": stalled shipments only (docs/predictions.md). */
  stalled: string;
}

/** The shipments module's list query for `f`, or null when no shipment can match it (an unknown state, courier or reason). */
function listQuery(f: ShipmentFilters, cursor?: string): { q: ListShipmentsInput; match?: string } | null {
  if (f.state && !STATES.has(f.state)) return null;
  if (f.courier && !courierBySlug(f.courier)) return null;
  if (f.reason && !isReasonCode(f.reason)) return null;
  const q = f.q.trim();
  // A search no AWB or reference can be (over 128 characters, control characters) matches nothing.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (charCount(q) > MAX_REFERENCE_CHARS || /[\u0000-\u001F\u007F]/.test(q)) return null;
  const list: ListShipmentsInput = {
    limit: PAGE_ROWS,
    ...(f.state ? { state: f.state as WebhookSpelling } : {}),
    ...(f.courier ? { courier: f.courier } : {}),
    ...(f.reason ? { reason_code: f.reason as ReasonCode } : {}),
    ...(f.stalled === "true" ? { stalled: "true" as const } : {}),
    ...(cursor && cursor.length <= 200 ? { cursor } : {}),
  };
  return { q: list, ...(q ? { match: q } : {}) };
}

/** Filters from a query string: each a string of at most 200 characters (longer ones are cut, they match nothing anyway). */
export function filtersOf(query: Record<string, unknown>): ShipmentFilters {
  const one = (k: string) => (typeof query[k] === "string" ? (query[k] as string).slice(0, 200) : "");
  return {
    q: one("q"),
    state: one("state"),
    courier: one("courier"),
    reason: one("reason"),
    stalled: one("stalled") === "true" ? "true" : "",
  };
}

export type ListedShipment = Awaited<ReturnType<typeof listShipments>>["shipments"][number];

export async function shipmentsPageRows(
  db: Db,
  accountId: string,
  f: ShipmentFilters,
  cursor?: string,
  stats?: StatsIndex,
): Promise<{ rows: ListedShipment[]; next: string | null }> {
  const lq = listQuery(f, cursor);
  if (!lq) return { rows: [], next: null };
  const r = await listShipments(db, accountId, lq.q, lq.match !== undefined ? { match: lq.match } : {}, stats);
  return { rows: r.shipments, next: r.next_cursor };
}

const EXPORT_COLUMNS = [
  "courier",
  "tracking_number",
  "reference",
  "state",
  "most_recent_status",
  "reason_code",
  "last_checkpoint_at",
  "estimated_delivery_date",
  "followed_since",
  "metadata",
  "stalled",
  "predicted_delivery_date",
  "predicted_delivery_earliest",
  "predicted_delivery_latest",
] as const;

/**
 * The filtered list as CSV (a header, then one row per shipment; columns in docs/dashboard.md, "Shipments"), read
 * page by page (100 rows a query) as the client takes it; `stats` gives the predicted delivery as the API's list does.
 */
export function exportCsv(
  db: Db,
  accountId: string,
  f: ShipmentFilters,
  stats?: StatsIndex,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let cursor: string | undefined;
  let first = true;
  const lq = listQuery(f);
  return new ReadableStream({
    async pull(ctl) {
      const r = lq
        ? await listShipments(
            db,
            accountId,
            { ...lq.q, limit: 100, ...(cursor ? { cursor } : {}) },
            lq.match !== undefined ? { match: lq.match } : {},
            stats,
          )
        : { shipments: [], next_cursor: null };
      const rows = r.shipments.map((s) => [
        s.courier,
        s.tracking_number,
        s.reference ?? "",
        s.status,
        s.most_recent_status,
        s.reason_code ?? "",
        s.last_checkpoint_at ?? "",
        s.estimated_delivery_date,
        s.followed_since,
        JSON.stringify(s.metadata),
        String(s.stalled),
        s.predicted_delivery?.date ?? "",
        s.predicted_delivery?.earliest ?? "",
        s.predicted_delivery?.latest ?? "",
      ]);
      ctl.enqueue(
        enc.encode(stringify(rows, { header: first, columns: [...EXPORT_COLUMNS], cast: { string: guardCell } })),
      );
      first = false;
      if (!r.next_cursor) ctl.close();
      else cursor = r.next_cursor;
    },
  });
}

/** One item of an import and its outcome (`POST /v1/shipments`'s result, or the schema's complaint). */
export interface ImportResult {
  line: number;
  courier: string;
  tracking_number: string;
  reference?: string;
  result: FollowResult["result"];
  already_followed?: boolean;
  message?: string;
}

type Item = { line: number; courier: string; tracking_number: string; reference?: string };

const HEADER_NAMES = new Map<string, keyof Omit<Item, "line">>([
  ["courier", "courier"],
  ["tracking_number", "tracking_number"],
  ["awb", "tracking_number"],
  ["tracking number", "tracking_number"],
  ["reference", "reference"],
]);

/**
 * Items of pasted lists and CSV files (comma, semicolon or tab): by header names (`tracking_number`/`awb`, `courier`,
 * `reference`) or by position (`AWB`, `courier,AWB`, `courier,AWB,reference`); no courier is `auto`.
 */
export function parseImport(texts: string[]): { items: Item[] } | { error: string } {
  const items: Item[] = [];
  for (const text of texts) {
    let records: string[][];
    try {
      records = parse(text, {
        bom: true,
        delimiter: delimiterOf(text),
        relax_column_count: true,
        skip_empty_lines: true,
        trim: true,
        max_record_size: 4096,
      });
    } catch {
      return { error: "The list could not be read as CSV (check the quotes)." };
    }
    items.push(...itemsOf(records));
  }
  if (items.length === 0) return { error: "The list has no shipments." };
  if (items.length > MAX_SHIPMENTS_PER_CALL)
    return {
      error: `The list has ${items.length} shipments; at most ${MAX_SHIPMENTS_PER_CALL} at a time (the POST /v1/shipments limit). Split it.`,
    };
  return { items };
}

/** The separator of a list: a tab, else a comma, else a semicolon when the first line has one (one per list, so quoting stays CSV's). */
function delimiterOf(text: string): string {
  const nl = text.indexOf("\n");
  const first = nl < 0 ? text : text.slice(0, nl);
  return first.includes("\t") ? "\t" : first.includes(",") ? "," : first.includes(";") ? ";" : ",";
}

/** Items of parsed CSV records: by header names when the first row has them, else by position. */
function itemsOf(records: string[][]): Item[] {
  const items: Item[] = [];
  const head = records[0]?.map((c) => c.toLowerCase()) ?? [];
  const named = head.some((c) => HEADER_NAMES.get(c) === "tracking_number");
  const cols = named ? head.map((c) => HEADER_NAMES.get(c)) : undefined;
  records.slice(named ? 1 : 0).forEach((rec, i) => {
    const cells = rec.map(unguardCell);
    const item: Item = { line: i + (named ? 2 : 1), courier: "auto", tracking_number: "" };
    if (cols) {
      cols.forEach((k, j) => {
        const cell = cells[j];
        if (k && cell) item[k] = cell;
      });
    } else {
      const [a, b, c] = cells;
      if (cells.length === 1) item.tracking_number = a ?? "";
      else Object.assign(item, { courier: a || "auto", tracking_number: b ?? "" }, c ? { reference: c } : {});
    }
    items.push(item);
  });
  return items;
}

/**
 * Follows the items for the signed-in account; an item failing the schema is `invalid` here (the API refuses the call).
 * @throws AppError ACCOUNT_NEEDS_ATTENTION (402), as the API.
 */
export async function followImported(
  deps: Parameters<typeof followShipments>[0],
  auth: AuthContext,
  items: Item[],
): Promise<ImportResult[]> {
  const out: ImportResult[] = [];
  const ok: { i: number; item: Item }[] = [];
  items.forEach((item, i) => {
    const { line: _line, ...body } = item;
    if (Value.Check(FollowShipmentsBody, { shipments: [body] })) ok.push({ i, item });
    else {
      const e = Value.Errors(FollowShipmentsBody, { shipments: [body] }).First();
      const field = e?.path.split("/").at(-1) ?? "item";
      out[i] = { ...item, result: "invalid", message: `${field}: ${e?.message ?? "not accepted"}` };
    }
  });
  if (ok.length) {
    const r = await followShipments(deps, auth, { shipments: ok.map(({ item: { line: _l, ...body } }) => body) });
    r.shipments.forEach((res, j) => {
      const { i, item } = defined(ok[j], "the follow request of a result");
      out[i] = {
        ...item,
        courier: res.courier,
        tracking_number: res.tracking_number,
        result: res.result,
        ...(res.already_followed !== undefined ? { already_followed: res.already_followed } : {}),
        ...(res.error ? { message: `${res.error.code}: ${res.error.message}` } : {}),
      };
    });
  }
  return out;
}
