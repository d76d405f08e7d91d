/** Sandbox convenience (spec-map: Sandbox): a development account on `growth` at the first start. */
import type { Db } from "../../db/client.ts";
import { createAccount, createApiKey, EmailTakenError } from "./service.ts";

const DEV_EMAIL = "dev@localhost";

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
