/**
 * Sandbox convenience (spec-map: Sandbox): the first start in sandbox mode of a process that serves the public
 * port (ROLE `api` or `all`, never `worker`: the sign-in link names that port) creates a development account on
 * `growth` and returns its key, which main.ts prints once. Later starts find the account and return undefined.
 */
import type { Db } from "../../db/client.ts";
import { createAccount, createApiKey, EmailTakenError } from "./service.ts";

export const DEV_EMAIL = "dev@localhost";

export async function ensureDevAccount(db: Db): Promise<{ email: string; key: string } | undefined> {
  try {
    const acc = await createAccount(db, { email: DEV_EMAIL, plan: "growth" });
    const { key } = await createApiKey(db, acc.id, "development", { alert: false });
    return { email: DEV_EMAIL, key };
  } catch (err) {
    if (err instanceof EmailTakenError) return undefined;
    throw err;
  }
}
