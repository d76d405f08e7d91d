/**
 * Public tracking links (docs/tracking-page.md#links): one per (account, followed shipment), kept on `follows`. The
 * token is HMAC-SHA256(account link key, follow nonce), 256 bits, base64url; only its SHA-256 is stored, for the lookup.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { accountLinkKey } from "../accounts/link-key.ts";
import type { CoreDeps } from "../../core-deps.ts";
import type { Db } from "../../db/client.ts";
import { decryptSecret } from "../../secrets/cipher.ts";

/** The page path of a token. */
const publicPath = (token: string) => `/t/${token}`;
/** Shape of a token: 32 bytes in base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** SHA-256 hex: the stored lookup key of a token. */
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

type LinkDeps = Pick<CoreDeps, "db" | "secretsKey" | "config">;

/** The token of a follow's nonce under the account's key. */
const tokenOf = (key: Buffer, nonce: string) => createHmac("sha256", key).update(nonce).digest("base64url");

const newNonce = () => randomBytes(16).toString("base64url");

/** Whether the account's public links are on (no settings row: on). */
async function linksEnabled(db: Db, accountId: string): Promise<boolean> {
  const [row] = (await db.$client`
    select public_links_enabled as on from account_branding where account_id = ${accountId}
  `) as unknown as { on: boolean }[];
  return row?.on ?? true;
}

/**
 * `public_url` of each of the account's follows of `shipmentIds` (absolute, from PUBLIC_BASE_URL), issuing a link
 * for a follow that has none yet; every id maps to null while the account's links are off. Ids not followed are absent.
 */
export async function publicUrls(
  deps: LinkDeps,
  accountId: string,
  shipmentIds: readonly string[],
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  if (shipmentIds.length === 0) return out;
  const rows = await linkNonces(deps.db, accountId, shipmentIds);
  if (!(await linksEnabled(deps.db, accountId))) {
    for (const r of rows) out.set(r.shipmentId, null);
    return out;
  }
  const key = await accountLinkKey(deps, accountId);
  const missing = rows.filter((r) => !r.nonce).map((r) => ({ id: r.shipmentId, nonce: newNonce() }));
  if (missing.length > 0) {
    await setLinkNonces(
      deps.db,
      accountId,
      missing.map((m) => ({ ...m, hash: hashToken(tokenOf(key, m.nonce)) })),
      true,
    );
    const again = await linkNonces(
      deps.db,
      accountId,
      missing.map((m) => m.id),
    );
    for (const r of again) {
      const row = rows.find((x) => x.shipmentId === r.shipmentId);
      if (row) row.nonce = r.nonce;
    }
  }
  for (const r of rows) out.set(r.shipmentId, r.nonce ? urlOf(deps, key, r.nonce) : null);
  return out;
}

const urlOf = (deps: Pick<CoreDeps, "config">, key: Buffer, nonce: string) =>
  `${deps.config.publicBaseUrl}${publicPath(tokenOf(key, nonce))}`;

/**
 * Revokes the follow's link and issues a new one (a new nonce, so the old token's hash matches nothing).
 * @returns the new `public_url` (null while links are off), or undefined when the account does not follow it
 */
export async function rotatePublicLink(
  deps: LinkDeps,
  accountId: string,
  shipmentId: string,
): Promise<string | null | undefined> {
  const key = await accountLinkKey(deps, accountId);
  const nonce = newNonce();
  const written = await setLinkNonces(
    deps.db,
    accountId,
    [{ id: shipmentId, nonce, hash: hashToken(tokenOf(key, nonce)) }],
    false,
  );
  if (written.length === 0) return undefined;
  return (await linksEnabled(deps.db, accountId)) ? urlOf(deps, key, nonce) : null;
}

/** The follow a token opens, or undefined (unknown, revoked, or links off: one answer for all). */
export interface LinkTarget {
  accountId: string;
  shipmentId: string;
  reference: string | null;
}

/**
 * Finds the follow behind `token` with one index probe on its SHA-256, whatever the token looks like (a malformed
 * token is hashed and probed too, so the work does not tell shapes apart); undefined for unknown, revoked or off.
 */
export async function findLink(db: Db, token: string): Promise<LinkTarget | undefined> {
  const hash = hashToken(TOKEN_SHAPE.test(token) ? token : `invalid:${token.slice(0, 64)}`);
  const [row] = (await db.$client`
    select f.account_id, f.shipment_id, f.reference from follows f
      left join account_branding b on b.account_id = f.account_id
    where f.public_token_hash = ${hash} and coalesce(b.public_links_enabled, true)
  `) as unknown as { account_id: string; shipment_id: string; reference: string | null }[];
  return row ? { accountId: row.account_id, shipmentId: row.shipment_id, reference: row.reference } : undefined;
}

/** {@link publicUrls} keyed by `courier/awb` instead of shipment id. */
export async function publicUrlsByAwb(
  deps: LinkDeps,
  accountId: string,
  keys: readonly { courier: string; tracking_number: string }[],
): Promise<Map<string, string | null>> {
  if (keys.length === 0) return new Map();
  const rows = (await deps.db.$client`
    select s.id, s.courier || '/' || s.tracking_number as k
    from jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) as v(courier text, tracking_number text)
    join shipments s on s.courier = v.courier and s.tracking_number = v.tracking_number
  `) as unknown as { id: string; k: string }[];
  const byId = await publicUrls(
    deps,
    accountId,
    rows.map((r) => r.id),
  );
  return new Map(rows.map((r) => [r.k, byId.get(r.id) ?? null]));
}

interface LinkNonce {
  shipmentId: string;
  nonce: string | null;
}

/** The link nonce of each of the account's follows of `shipmentIds` (ids not followed are absent). */
async function linkNonces(db: Db, accountId: string, shipmentIds: readonly string[]): Promise<LinkNonce[]> {
  return (await db.$client`
    select shipment_id as "shipmentId", public_link_nonce as nonce from follows
    where account_id = ${accountId} and shipment_id = any(${shipmentIds as string[]})
  `) as unknown as LinkNonce[];
}

/**
 * Stores nonces and token hashes. `onlyUnissued`: only where the follow has none yet (a concurrent issue keeps
 * its own; the caller reads back). Otherwise replaces (a rotation). @returns the shipment ids written
 */
async function setLinkNonces(
  db: Db,
  accountId: string,
  rows: readonly { id: string; nonce: string; hash: string }[],
  onlyUnissued: boolean,
): Promise<string[]> {
  const written = (await db.$client`
    update follows f set public_link_nonce = v.nonce, public_token_hash = v.hash
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as v(id text, nonce text, hash text)
    where f.account_id = ${accountId} and f.shipment_id = v.id
      ${onlyUnissued ? db.$client`and f.public_link_nonce is null` : db.$client``}
    returning f.shipment_id
  `) as unknown as { shipment_id: string }[];
  return written.map((r) => r.shipment_id);
}

/** The public-link columns a read joins in (the follow's nonce and the account's sealed key), or null when off. */
export interface LinkColumns {
  nonce: string;
  key_enc: string | null;
}

/**
 * `public_url` from joined columns, without a statement of its own (the delivery claim and the events list read
 * them in theirs): null without a link, a key, or while the account's links are off (the join gives null then).
 */
export function publicUrlOf(
  deps: Pick<CoreDeps, "secretsKey" | "config">,
  accountId: string,
  link: LinkColumns | null | undefined,
): string | null {
  if (!link?.nonce || !link.key_enc) return null;
  const key = Buffer.from(decryptSecret(deps.secretsKey, accountId, link.key_enc), "base64url");
  return `${deps.config.publicBaseUrl}${publicPath(tokenOf(key, link.nonce))}`;
}
