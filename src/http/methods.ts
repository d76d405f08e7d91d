/** 405 with `Allow` (RFC 9110 §15.5.6) for a path served under other methods (docs/api-conventions.md). */
import { Elysia } from "elysia";
import { errorBody } from "../lib/errors.ts";
import { jsonResponse } from "../lib/json.ts";
import { pathOf } from "./core.ts";
import { syncRequestHook } from "./elysia-quirks.ts";

interface RouteLike {
  method: string;
  path: string;
}

interface Table {
  statics: Map<string, Set<string>>;
  /** Each static path (without a trailing slash) → the path as the route declares it (the log's template). */
  templates: Map<string, string>;
  patterns: { path: string; re: RegExp; methods: Set<string> }[];
}

const ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const trim = (p: string) => (p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p);
const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

function buildTable(routes: readonly RouteLike[]): Table {
  const statics = new Map<string, Set<string>>();
  const templates = new Map<string, string>();
  const byPattern = new Map<string, Set<string>>();
  for (const r of routes) {
    const method = r.method.toUpperCase();
    if (!ORDER.includes(method)) continue;
    const path = trim(r.path);
    if (!templates.has(path)) templates.set(path, r.path);
    const parametric = path.includes(":") || path.includes("*");
    const map = parametric ? byPattern : statics;
    const methods = map.get(path) ?? new Set<string>();
    methods.add(method);
    map.set(path, methods);
  }
  const patterns = [...byPattern].map(([path, methods]) => ({
    path,
    re: new RegExp(
      `^${path
        .split("/")
        .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : escapeRegExp(seg)))
        .join("/")}$`,
    ),
    methods,
  }));
  return { statics, templates, patterns };
}

/** The methods the app serves at `path` (empty when it serves none there). */
function allowedAt(table: Table, path: string): Set<string> {
  const exact = table.statics.get(path);
  if (exact) return exact;
  const out = new Set<string>();
  for (const p of table.patterns) if (p.re.test(path)) for (const m of p.methods) out.add(m);
  return out;
}

/** The 405 answer for `request`, or undefined when its method is allowed (or its path serves nothing). */
function refusal(table: Table, request: Request, set: { headers: Record<string, unknown> }): Response | undefined {
  const path = trim(pathOf(request.url));
  if (path === "/dashboard" || path.startsWith("/dashboard/")) return undefined; // HTML pages answer for themselves
  const allowed = allowedAt(table, path);
  if (allowed.size === 0) return undefined; // no such path: the router's 404
  const method = request.method.toUpperCase();
  const v1 = path === "/v1" || path.startsWith("/v1/");
  if (allowed.has(method) || (method === "HEAD" && !v1 && allowed.has("GET"))) return undefined;
  const allow = ORDER.filter((m) => allowed.has(m)).join(", ");
  return jsonResponse(
    405,
    errorBody("METHOD_NOT_ALLOWED", `${method} is not allowed on this path; it accepts ${allow}.`),
    {
      allow,
      "x-request-id": String(set.headers["x-request-id"] ?? ""),
      ...Object.fromEntries(
        Object.entries(set.headers).filter(
          ([k]) => k.startsWith("ratelimit-") || k === "strict-transport-security" || k === "x-content-type-options",
        ),
      ),
    } as Record<string, string>,
  );
}

/** The app's routes, read once on the first request (the app is complete by then). */
export class RouteTable {
  #table: Table | undefined;
  constructor(private readonly routes: () => readonly RouteLike[]) {}

  get table(): Table {
    this.#table ??= buildTable(this.routes());
    return this.#table;
  }

  /** The route template `method` `path` matches (static first), or that path's under other methods. */
  templateOf(method: string, path: string): string | undefined {
    const p = trim(path);
    const exact = this.table.templates.get(p);
    if (exact !== undefined && this.table.statics.has(p)) return exact;
    const m = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    let other: string | undefined;
    for (const pattern of this.table.patterns) {
      if (!pattern.re.test(p)) continue;
      if (pattern.methods.has(m)) return pattern.path;
      other ??= pattern.path;
    }
    return other;
  }
}

/** The guard (an `onRequest` hook that answers 405 or lets the request through). */
export function methodGuard(routes: RouteTable) {
  return new Elysia({ name: "method-guard" }).onRequest(
    syncRequestHook(function methodDoor({ request, set }) {
      return refusal(routes.table, request, set);
    }),
  );
}
