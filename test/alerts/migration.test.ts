/**
 * Migration 0023 (docs/alerts.md, "The alert address") carries a database forward: an alert address saved before it
 * counts as confirmed and keeps getting alerts, and the previous release's claim, still running during a rolling
 * deploy, works against the new schema and never takes the rows only the new release sends (digests, confirmations).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import { MIGRATIONS_FOLDER, migrateDatabase } from "../../src/db/migrate.ts";
import { claimAlerts } from "../../src/modules/alerts/sender.ts";
import { readAlertSettings } from "../../src/modules/alerts/settings.ts";
import { ADMIN_URL } from "../helpers/db.ts";
import { testTablespace } from "../helpers/db-tablespace.ts";

const name = `ct_m_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
const url = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
})();
const before0023 = mkdtempSync(join(tmpdir(), "ct-migrations-"));

beforeAll(async () => {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
    entries: { idx: number; tag: string }[];
  };
  journal.entries = journal.entries.filter((e) => e.idx < 23);
  mkdirSync(join(before0023, "meta"));
  writeFileSync(join(before0023, "meta", "_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries)
    copyFileSync(join(MIGRATIONS_FOLDER, `${e.tag}.sql`), join(before0023, `${e.tag}.sql`));
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const tablespace = await testTablespace(admin, ADMIN_URL);
  await admin.unsafe(`create database "${name}"${tablespace ? ` tablespace "${tablespace}"` : ""}`);
  await admin.end({ timeout: 5 });
});
afterAll(async () => {
  rmSync(before0023, { recursive: true, force: true });
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end({ timeout: 5 });
});

/** The claim of the release before 0023, as it was sent. */
const previousClaim = (sql: postgres.Sql) => sql`
  with c as (
    select id from alerts where state = 'pending' and next_attempt_at <= now()
    order by next_attempt_at limit 20 for update skip locked
  ), u as (
    update alerts a set attempts = a.attempts + 1, next_attempt_at = l.until, lease_until = l.until
    from c, (select now() + 60000 * interval '1 millisecond' as until) l
    where a.id = c.id
    returning a.id, a.account_id, a.kind, a.details, a.attempts, a.lease_until, a.created_at
  )
  select u.*, coalesce(s.email, acc.email) as recipient, coalesce(u.kind = any(s.disabled_kinds), false) as disabled
  from u join accounts acc on acc.id = u.account_id left join alert_settings s on s.account_id = u.account_id`;

test("an address saved before 0023 stays the alert address; the previous release's claim leaves the new rows alone", async () => {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle(sql), { migrationsFolder: before0023 });
    await sql`insert into accounts (id, email, plan) values ('acc_old', 'owner@example.com', 'pro')`;
    await sql`insert into alert_settings (account_id, email) values ('acc_old', 'ops@example.com')`;
    await sql`insert into alerts (account_id, kind, dedupe_key, details) values ('acc_old', 'secret_rotated', 'k1', '{}')`;
  } finally {
    await sql.end({ timeout: 5 });
  }

  await migrateDatabase(url);

  const pool = connect(url, { max: 2 });
  try {
    const settings = await readAlertSettings(pool.db, "acc_old", Date.now());
    expect(settings).toMatchObject({ email: "ops@example.com", pending: null });
    // Rows only the new release sends: a digest and a confirmation to an address nobody confirmed.
    await pool.sql`insert into alerts (account_id, kind, dedupe_key, details, state) values
      ('acc_old', 'digest', 'secret_rotated@x', '{"kind":"secret_rotated"}', 'queued'),
      ('acc_old', 'address_confirmation', 'lnk_x', '{"email":"victim@example.com"}', 'queued')`;
    const old = await previousClaim(pool.sql);
    expect(old.map((r) => [r.kind, r.recipient])).toEqual([["secret_rotated", "ops@example.com"]]);
    // Due at the claim's own instant: the claim compares with the clock it is given, not the database's now().
    const at = Date.now();
    await pool.sql`update alerts set next_attempt_at = ${new Date(at).toISOString()}, lease_until = null`;
    const now = await claimAlerts(pool.sql, at, 20);
    expect(now.map((r) => [r.kind, r.recipient]).sort()).toEqual([
      ["address_confirmation", "victim@example.com"],
      ["digest", "ops@example.com"],
      ["secret_rotated", "ops@example.com"],
    ]);
  } finally {
    await pool.sql.end({ timeout: 5 });
  }
});
