/**
 * `bun run rotate-secrets` as an operator runs it (docs/deployment.md, Rotating SECRETS_KEY): a real process over a
 * real database moves the webhooks' custom headers to the new key along with the signing secrets, and a header value
 * neither key opens fails the run and leaves the key check value alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createAccount } from "../../src/modules/accounts/service.ts";
import { openHeaders, sealHeaders } from "../../src/modules/webhooks/headers.ts";
import { decryptSecretWith, encryptSecret } from "../../src/secrets/cipher.ts";
import { keyCheckValue, verifySecretsKey } from "../../src/secrets/key.ts";
import { newId } from "../../src/lib/ids.ts";
import { webhooks } from "../../src/db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

const ROOT = join(import.meta.dir, "../..");
const CLI_TEST_MS = 60_000;
const b64 = (k: Uint8Array) => Buffer.from(k).toString("base64url");
const check = async () =>
  (await tdb.sql`select value from service_settings where name = 'secrets_key_check'`)[0]?.value as string | undefined;

function rotate(key: Uint8Array, previous: Uint8Array): number {
  const env = {
    ...process.env,
    DATABASE_URL: tdb.url,
    SECRETS_KEY: b64(key),
    SECRETS_KEY_PREVIOUS: b64(previous),
    LOG_LEVEL: "silent",
  };
  return Bun.spawnSync(["bun", "run", "src/cli/rotate-secrets.ts"], { cwd: ROOT, env }).exitCode ?? -1;
}

/** A webhook row whose `headers_enc` is `seal(id)`. */
async function webhookWithHeaders(accountId: string, seal: (id: string) => string | null) {
  const id = newId("wh");
  const enc = seal(id);
  await tdb.db.insert(webhooks).values({
    id,
    accountId,
    url: "https://receiver.example.com/hook",
    events: ["shipment.delivered"],
    mode: "test",
    headersEnc: enc,
    headersMasked: { Authorization: "Bear…••••" },
  });
  return id;
}

let keyNow: Uint8Array | undefined;
const headersOf = async (id: string) =>
  (await tdb.sql`select headers_enc, headers_masked from webhooks where id = ${id}`)[0]!;

test(
  "custom headers are re-encrypted under the new key; the old key no longer opens them",
  async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    expect(await verifySecretsKey(tdb.db, oldKey)).toBe("stored");
    const acc = await createAccount(tdb.db, { email: `rot-h-${Date.now()}@example.com`, plan: "growth" });
    await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(oldKey, acc.id, "whsec_h")} where id = ${acc.id}`;
    const raw = { Authorization: "Bearer tok_0123456789", "X-Tenant": "acme" };
    const id = await webhookWithHeaders(acc.id, (wh) => sealHeaders(oldKey, wh, raw).headersEnc);
    const plain = await webhookWithHeaders(acc.id, () => null);
    const before = await headersOf(id);

    expect(rotate(newKey, oldKey)).toBe(0);
    const after = await headersOf(id);
    expect(after.headers_enc).not.toBe(before.headers_enc);
    expect(openHeaders(newKey, id, after.headers_enc)).toEqual(raw);
    // Exactly the old key (openHeaders memoises by ciphertext, whatever the key).
    expect(() => decryptSecretWith(oldKey, `webhook-headers:${id}`, after.headers_enc)).toThrow();
    expect(after.headers_masked).toEqual(before.headers_masked);
    expect((await headersOf(plain)).headers_enc).toBeNull();
    expect(await check()).toBe(keyCheckValue(newKey));
    // A second run finds everything current.
    expect(rotate(newKey, randomBytes(32))).toBe(0);
    expect((await headersOf(id)).headers_enc).toBe(after.headers_enc);
    keyNow = newKey;
  },
  CLI_TEST_MS,
);

test(
  "a header value neither key opens: exit 1 and the check value stays",
  async () => {
    expect(keyNow).toBeDefined();
    const before = await check();
    const acc = await createAccount(tdb.db, { email: `rot-hbad-${Date.now()}@example.com`, plan: "growth" });
    await webhookWithHeaders(acc.id, (wh) => sealHeaders(randomBytes(32), wh, { "X-A": "b" }).headersEnc);
    // Every signing secret opens with the previous key, so only the header value fails.
    expect(rotate(randomBytes(32), keyNow!)).toBe(1);
    expect(await check()).toBe(before);
  },
  CLI_TEST_MS,
);
