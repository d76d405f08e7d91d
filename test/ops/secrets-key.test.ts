/**
 * One encryption key per database, checked (docs/deployment.md, Rotating
 * SECRETS_KEY): the first process stores a check value; another key is
 * refused; SECRETS_KEY_PREVIOUS decrypts old values while rotating; the
 * re-encryption moves every secret and the check value to the new key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import {
  keyCheckValue,
  loadSecretsKey,
  SecretsKeyMismatchError,
  verifySecretsKey,
  type SecretsKey,
} from "../../src/secrets/key.ts";
import { reencryptSecrets } from "../../src/modules/accounts/secret-rotation.ts";
import { createAccount } from "../../src/modules/accounts/service.ts";
import { decryptSecret, decryptSecretWith, encryptSecret } from "../../src/secrets/cipher.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

const b64 = () => randomBytes(32).toString("base64url");
const keyOf = (env: Record<string, string>) => loadSecretsKey(loadConfig(env)).key;
const check = async () =>
  (await tdb.sql`select value from service_settings where name = 'secrets_key_check'`)[0]?.value as string | undefined;

describe("loading the key", () => {
  test("with DATABASE_URL a generated key is refused unless SECRETS_KEY_GENERATE=single-node", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ct-key-"));
    const env = { DATABASE_URL: "postgres://u@127.0.0.1:5432/x", DATA_DIR: dataDir };
    expect(() => keyOf(env)).toThrow(ConfigError);
    expect(() => keyOf(env)).toThrow(/SECRETS_KEY is required with DATABASE_URL/);
    const generated = loadSecretsKey(loadConfig({ ...env, SECRETS_KEY_GENERATE: "single-node" }));
    expect(generated.generated).toBe(true);
    // Reused on the next start, and the embedded default (no DATABASE_URL) needs no opt-in.
    expect(Buffer.from(keyOf({ DATA_DIR: dataDir })).equals(Buffer.from(generated.key))).toBe(true);
    expect(() => keyOf({ SECRETS_KEY_GENERATE: "many" })).toThrow(/SECRETS_KEY_GENERATE/);
  });

  test("SECRETS_KEY_PREVIOUS rides along for decryption; a malformed one is a configuration error", () => {
    const key = keyOf({ SECRETS_KEY: b64(), SECRETS_KEY_PREVIOUS: b64() });
    expect(key.previous?.byteLength).toBe(32);
    expect(() =>
      keyOf({
        SECRETS_KEY: b64(),
        SECRETS_KEY_PREVIOUS: Buffer.alloc(16).toString("base64") + "AAAAAAAAAAAAAAAAAAAAAA",
      }),
    ).toThrow(/SECRETS_KEY_PREVIOUS/);
  });
});

describe("the check value", () => {
  test("first process stores it; the same key passes; another key is refused with one line", async () => {
    const k1 = keyOf({ SECRETS_KEY: b64() });
    expect(await verifySecretsKey(tdb.db, k1)).toBe("stored");
    expect(await check()).toBe(keyCheckValue(k1));
    expect(await verifySecretsKey(tdb.db, k1)).toBe("current");
    const k2 = keyOf({ SECRETS_KEY: b64() });
    const err = await verifySecretsKey(tdb.db, k2).catch((e) => e);
    expect(err).toBeInstanceOf(SecretsKeyMismatchError);
    expect(err.message).not.toContain("\n");
    expect(err.message).toContain("SECRETS_KEY does not match");
    // The check value reveals nothing usable: it is not the key in any encoding.
    expect(await check()).not.toContain(Buffer.from(k1).toString("hex"));
    await tdb.sql`delete from service_settings`;
  });

  test("a database with secrets from before check values: the first key must decrypt them", async () => {
    const k1 = keyOf({ SECRETS_KEY: b64() });
    const acc = await createAccount(tdb.db, { email: `pre-${Date.now()}@example.com`, plan: "growth" });
    await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(k1, acc.id, "whsec_old")} where id = ${acc.id}`;
    await expect(verifySecretsKey(tdb.db, keyOf({ SECRETS_KEY: b64() }))).rejects.toBeInstanceOf(
      SecretsKeyMismatchError,
    );
    expect(await check()).toBeUndefined();
    expect(await verifySecretsKey(tdb.db, k1)).toBe("stored");
    await tdb.sql`delete from service_settings`;
    await tdb.sql`delete from accounts where id = ${acc.id}`;
  });
});

describe("rotation", () => {
  test("new key + previous: start allowed, old values decrypt; re-encryption moves every secret and the check value", async () => {
    const oldKey = keyOf({ SECRETS_KEY: b64() });
    expect(await verifySecretsKey(tdb.db, oldKey)).toBe("stored");
    const accounts = [];
    for (let i = 0; i < 3; i++) {
      const acc = await createAccount(tdb.db, { email: `rot${i}-${Date.now()}@example.com`, plan: "growth" });
      await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(oldKey, acc.id, `whsec_${i}`)}, webhook_secret_prev_enc = ${encryptSecret(oldKey, acc.id, `whsec_prev_${i}`)} where id = ${acc.id}`;
      accounts.push(acc);
    }
    const oldB64 = Buffer.from(oldKey).toString("base64url");
    const newKey: SecretsKey = keyOf({ SECRETS_KEY: b64(), SECRETS_KEY_PREVIOUS: oldB64 });
    // A process with the new key alone is refused; with the old one as previous it starts.
    await expect(
      verifySecretsKey(tdb.db, keyOf({ SECRETS_KEY: Buffer.from(newKey).toString("base64url") })),
    ).rejects.toBeInstanceOf(SecretsKeyMismatchError);
    expect(await verifySecretsKey(tdb.db, newKey)).toBe("previous");
    const [row] = await tdb.sql`select webhook_secret_enc from accounts where id = ${accounts[0]!.id}`;
    expect(decryptSecret(newKey, accounts[0]!.id, row!.webhook_secret_enc)).toBe("whsec_0");

    // A secret written meanwhile under the new key counts as current.
    const fresh = await createAccount(tdb.db, { email: `rot-new-${Date.now()}@example.com`, plan: "growth" });
    await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(newKey, fresh.id, "whsec_new")} where id = ${fresh.id}`;

    const report = await reencryptSecrets(tdb.db, newKey);
    expect(report).toEqual({ reEncrypted: 6, alreadyCurrent: 1, failed: 0 });
    for (const [i, acc] of accounts.entries()) {
      const [r] = await tdb.sql`select webhook_secret_enc, webhook_secret_prev_enc from accounts where id = ${acc.id}`;
      expect(decryptSecretWith(newKey, acc.id, r!.webhook_secret_enc)).toBe(`whsec_${i}`);
      expect(decryptSecretWith(newKey, acc.id, r!.webhook_secret_prev_enc)).toBe(`whsec_prev_${i}`);
      expect(() => decryptSecretWith(oldKey, acc.id, r!.webhook_secret_enc)).toThrow();
    }
    expect(await check()).toBe(keyCheckValue(newKey));
    // Now the new key alone starts, and the old key alone is refused.
    expect(await verifySecretsKey(tdb.db, keyOf({ SECRETS_KEY: Buffer.from(newKey).toString("base64url") }))).toBe(
      "current",
    );
    await expect(verifySecretsKey(tdb.db, keyOf({ SECRETS_KEY: oldB64 }))).rejects.toBeInstanceOf(
      SecretsKeyMismatchError,
    );
    // Running it again changes nothing.
    expect(await reencryptSecrets(tdb.db, newKey)).toEqual({ reEncrypted: 0, alreadyCurrent: 7, failed: 0 });
  });

  test("a secret neither key opens fails the run and leaves the check value alone", async () => {
    const before = await check();
    const acc = await createAccount(tdb.db, { email: `rot-bad-${Date.now()}@example.com`, plan: "growth" });
    await tdb.sql`update accounts set webhook_secret_enc = ${encryptSecret(randomBytes(32), acc.id, "whsec_x")} where id = ${acc.id}`;
    const k = keyOf({ SECRETS_KEY: b64(), SECRETS_KEY_PREVIOUS: b64() });
    const report = await reencryptSecrets(tdb.db, k);
    expect(report.failed).toBeGreaterThanOrEqual(1);
    expect(await check()).toBe(before);
  });
});
