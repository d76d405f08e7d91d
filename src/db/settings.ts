/** Deployment-wide settings (`service_settings`, one row per name): the one place that writes them. */
import { type SQL, sql } from "drizzle-orm";

/** A Drizzle database or transaction (with or without the schema). */
export interface Executor {
  execute(query: SQL): PromiseLike<unknown>;
}

/** The value of setting `name`, or undefined. @throws on DB errors */
export async function readSetting(db: Executor, name: string): Promise<string | undefined> {
  const rows = (await db.execute(sql`select value from service_settings where name = ${name}`)) as unknown as {
    value: string;
  }[];
  return rows[0]?.value;
}

/** Sets `name` to `value` unless it is set already. @throws on DB errors */
export async function initSetting(db: Executor, name: string, value: string): Promise<void> {
  await db.execute(
    sql`insert into service_settings (name, value) values (${name}, ${value}) on conflict (name) do nothing`,
  );
}

/** Sets `name` to `value`. @throws on DB errors */
export async function putSetting(db: Executor, name: string, value: string): Promise<void> {
  await db.execute(sql`
    insert into service_settings (name, value) values (${name}, ${value})
    on conflict (name) do update set value = excluded.value, updated_at = now()`);
}
