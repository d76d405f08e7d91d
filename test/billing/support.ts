/** Shared setup of the billing tests: an account signed in to the dashboard, and plan look-ups. */
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema/index.ts";
import { createAccount, createApiKey } from "../../src/modules/accounts/service.ts";
import type { TestContext } from "../helpers/app.ts";
import { Client } from "../dashboard/support.ts";

const PASSWORD = "quartz-lantern-meadow-42";

/** A free account with an API key, signed in to the dashboard through a cookie-keeping client. */
export async function signedInAccount(ctx: TestContext, app: { handle(r: Request): Promise<Response> } = ctx.app) {
  const email = `billing-${Bun.randomUUIDv7().slice(-8)}@example.com`;
  const acc = await createAccount(ctx.tdb.db, { email, password: PASSWORD });
  const { key } = await createApiKey(ctx.tdb.db, acc.id);
  const c = new Client(app);
  const res = await c.signIn(email, PASSWORD);
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return { id: acc.id, email, key, c };
}

/** The account's plan as stored. */
export async function planOf(ctx: TestContext, accountId: string): Promise<string> {
  return (await ctx.tdb.db.select({ plan: accounts.plan }).from(accounts).where(eq(accounts.id, accountId)))[0]!.plan;
}

/** The quota `/v1/track` reports for this key (what the account's plan buys). */
export async function trackQuota(ctx: TestContext, key: string): Promise<number> {
  const [res, body] = await ctx.call("/v1/track?courier=delhivery&tracking_number=1234567890120", { key });
  if (res.status !== 200) throw new Error(`track answered ${res.status}`);
  return body.usage.quota;
}
