/** `Idempotency-Key` on every `POST /v1/…`, Stripe's semantics (docs/idempotency.md). */
import { createHash } from "node:crypto";
import type { CoreDeps } from "../core-deps.ts";
import type { Db } from "../db/client.ts";
import { AppError, errorBody, RequestValidationError, type ValidationItem } from "../lib/errors.ts";
import type { AuthContext } from "../modules/accounts/service.ts";
import { decryptSecretWith, encryptSecret } from "../secrets/cipher.ts";
import { JSON_CONTENT_TYPE } from "../lib/json.ts";

/** Stored responses are kept (and keys are reserved) this long: 24 hours, in ms. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A first request that has not finished after this long (ms) is presumed dead; a retry may take the key over. */
const IDEMPOTENCY_LEASE_MS = 5 * 60_000;
/** Longest key accepted (Stripe: 255). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** A key's characters: visible ASCII (U+0021 to U+007E), so it is safe to log and compare byte for byte. */
export const IDEMPOTENCY_KEY_PATTERN = "^[!-~]+$";

const KEY_RE = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export const KEY_REUSED_TYPE = "idempotency_key_reused";

export const IDEMPOTENCY_HEADER = "idempotency-key";
const REPLAYED_HEADER = "idempotent-replayed";

type Deps = Pick<CoreDeps, "db" | "clock" | "secretsKey">;

interface IdempotentContext {
  auth: AuthContext;
  body?: unknown;
  request: Request;
  set: { status?: number | string; headers: Record<string, unknown> };
}

/** The 422 item for a malformed key, or undefined; the key itself is never repeated in the item. */
export function idempotencyKeyProblem(key: string): ValidationItem | undefined {
  const loc = ["header", "Idempotency-Key"];
  if (key.length === 0) return { loc, msg: "String should have at least 1 character", type: "string_too_short" };
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    return { loc, msg: `String should have at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, type: "string_too_long" };
  if (!KEY_RE.test(key))
    return { loc, msg: `String should match pattern '${IDEMPOTENCY_KEY_PATTERN}'`, type: "string_pattern_mismatch" };
  return undefined;
}

function keyOf(request: Request): string | undefined {
  const key = request.headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem) throw new RequestValidationError([problem]);
  return key;
}

const requestHash = (request: Request, body: unknown) =>
  createHash("sha256")
    .update(`${request.method} ${new URL(request.url).pathname}\n${JSON.stringify(body ?? null)}`)
    .digest("hex");

interface StoredRow {
  request_hash: string;
  state: string;
  status: number | null;
  body_enc: string | null;
}

/**
 * Claims `key` for this request: "owner" when this request runs, else the row another request holds. One upsert
 * also takes over an expired key (24 h) or a dead first attempt (lease passed).
 */
async function claim(
  db: Db,
  accountId: string,
  key: string,
  hash: string,
  nowMs: number,
): Promise<"owner" | StoredRow> {
  const sql = db.$client;
  const now = new Date(nowMs).toISOString();
  const expired = new Date(nowMs - IDEMPOTENCY_TTL_MS).toISOString();
  const lease = new Date(nowMs + IDEMPOTENCY_LEASE_MS).toISOString();
  const won = await sql`
    insert into idempotency_keys (account_id, key, request_hash, state, locked_until, created_at)
    values (${accountId}, ${key}, ${hash}, 'running', ${lease}, ${now})
    on conflict (account_id, key) do update
      set request_hash = excluded.request_hash, state = 'running', locked_until = excluded.locked_until,
          status = null, body_enc = null, created_at = excluded.created_at
      where idempotency_keys.created_at < ${expired}
         or (idempotency_keys.state = 'running' and idempotency_keys.locked_until < ${now} and idempotency_keys.request_hash = excluded.request_hash)
    returning 1
  `;
  if (won.length) return "owner";
  const [row] =
    (await sql`select request_hash, state, status, body_enc from idempotency_keys where account_id = ${accountId} and key = ${key}`) as unknown as StoredRow[];
  // Deleted in between (the first request was refused or failed with a 5xx): run as the owner of a fresh claim.
  return row ?? claim(db, accountId, key, hash, nowMs);
}

/** Decrypts a stored body with SECRETS_KEY or SECRETS_KEY_PREVIOUS; undefined when neither opens it. */
function openStored(
  key: Deps["secretsKey"] & { previous?: Uint8Array },
  accountId: string,
  enc: string,
): string | undefined {
  for (const k of [key, key.previous]) {
    if (!k) continue;
    try {
      return decryptSecretWith(k, `idem:${accountId}`, enc);
    } catch {}
  }
  return undefined;
}

async function store(deps: Deps, accountId: string, key: string, status: number, body: unknown): Promise<void> {
  const enc = encryptSecret(deps.secretsKey, `idem:${accountId}`, JSON.stringify(body ?? null));
  await deps.db
    .$client`update idempotency_keys set state = 'done', status = ${status}, body_enc = ${enc}, locked_until = null where account_id = ${accountId} and key = ${key}`;
}

/**
 * Runs a POST handler's work (`run`) under `Idempotency-Key` handling; without the header `run` simply runs.
 * A replay returns the stored response as a `Response` (Elysia passes it through untouched).
 * @throws RequestValidationError (422) for a malformed key or one reused with a different request
 * @throws AppError IDEMPOTENCY_IN_PROGRESS (409)
 */
export async function idempotent<R>(deps: Deps, c: IdempotentContext, run: () => R | Promise<R>): Promise<R> {
  const key = keyOf(c.request);
  if (key === undefined) return run();
  const accountId = c.auth.account.id;
  const hash = requestHash(c.request, c.body);
  const held = await claim(deps.db, accountId, key, hash, deps.clock.now());
  if (held !== "owner") {
    if (held.request_hash !== hash)
      throw new RequestValidationError([
        {
          loc: ["header", "Idempotency-Key"],
          msg: "This key was already used with a different request (method, path or body); use a new key.",
          type: KEY_REUSED_TYPE,
        },
      ]);
    if (held.state !== "done" || held.status === null || held.body_enc === null)
      throw new AppError(
        "IDEMPOTENCY_IN_PROGRESS",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
        {},
        { "retry-after": "1" },
      );
    const body = openStored(deps.secretsKey, accountId, held.body_enc);
    if (body === undefined) {
      // Written under a SECRETS_KEY that is gone (rotation finished): the stored answer is lost; run afresh.
      await deps.db.$client`delete from idempotency_keys where account_id = ${accountId} and key = ${key}`;
      return idempotent(deps, c, run);
    }
    const headers: Record<string, string> = { "content-type": JSON_CONTENT_TYPE, [REPLAYED_HEADER]: "true" };
    for (const [k, v] of Object.entries(c.set.headers)) if (typeof v === "string") headers[k] = v;
    return new Response(body, { status: held.status, headers }) as unknown as R;
  }
  try {
    const out = await run();
    await store(deps, accountId, key, typeof c.set.status === "number" ? c.set.status : 200, out);
    return out;
  } catch (e) {
    if (e instanceof AppError && executed(e.status))
      await store(deps, accountId, key, e.status, errorBody(e.code, e.message, e.extra));
    // A refusal (validation, a limit, 401/402/408) or a 5xx frees the key: the retry runs again.
    else
      await deps.db.$client`delete from idempotency_keys where account_id = ${accountId} and key = ${key}`.catch(
        () => {},
      );
    throw e;
  }
}

/** Statuses that refuse to run the operation now (auth, account state, timeout, a limit with Retry-After). */
const REFUSALS: ReadonlySet<number> = new Set([401, 402, 408, 429]);

/**
 * Whether an error answer of `status` is the result of the operation having run, and so is stored under the key:
 * Stripe saves a result only once the endpoint began executing; a refusal or a 5xx leaves the key free
 * (docs/idempotency.md). Request-check failures (RequestValidationError, 422) are never AppErrors, never stored.
 */
export function executed(status: number): boolean {
  return status < 500 && !REFUSALS.has(status);
}

/** Deletes stored responses created before `cutoffMs` (epoch ms), `batch` rows at a time; returns how many. */
export async function prune(db: Db, cutoffMs: number, batch = 5_000): Promise<number> {
  const cutoff = new Date(cutoffMs).toISOString();
  let total = 0;
  for (;;) {
    const rows = await db.$client`
      delete from idempotency_keys where ctid in (select ctid from idempotency_keys where created_at < ${cutoff} limit ${batch})
      returning 1
    `;
    total += rows.length;
    if (rows.length < batch) return total;
  }
}
