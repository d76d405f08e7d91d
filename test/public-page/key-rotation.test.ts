/**
 * Public links survive a SECRETS_KEY rotation (docs/tracking-page.md#links): `rotate-secrets` re-encrypts the
 * account's link key with the signing secrets, so every `public_url` reads the same after the rotation and the
 * stored key opens only with the new SECRETS_KEY.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { Config } from "../../src/config/index.ts";
import { follows, shipments } from "../../src/db/schema/index.ts";
import { newId } from "../../src/lib/ids.ts";
import { reencryptSecrets } from "../../src/modules/accounts/secret-rotation.ts";
import { createAccount } from "../../src/modules/accounts/service.ts";
import { findLink, publicUrls } from "../../src/modules/following/public-links.ts";
import { decryptSecretWith } from "../../src/secrets/cipher.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

test("a rotation re-encrypts the link key; the links stay the same and keep opening", async () => {
  const config = { publicBaseUrl: "https://track.example.com" } as Config;
  const oldKey = randomBytes(32);
  const newKey = Object.assign(randomBytes(32), { previous: oldKey });
  const acc = await createAccount(tdb.db, { email: `rot-link-${Date.now()}@example.com`, plan: "growth" });
  const shp = newId("shp");
  await tdb.db
    .insert(shipments)
    .values({ id: shp, courier: "delhivery", trackingNumber: "1234567890121", followers: 1 });
  await tdb.db.insert(follows).values({ accountId: acc.id, shipmentId: shp });

  const before = (await publicUrls({ db: tdb.db, secretsKey: oldKey, config }, acc.id, [shp])).get(shp)!;
  const report = await reencryptSecrets(tdb.db, newKey, { storeCheck: false });
  expect(report).toMatchObject({ reEncrypted: 1, failed: 0 });

  const [row] = await tdb.sql`select public_link_key_enc from accounts where id = ${acc.id}`;
  expect(() => decryptSecretWith(oldKey, acc.id, row!.public_link_key_enc)).toThrow();
  decryptSecretWith(newKey, acc.id, row!.public_link_key_enc);
  const after = (await publicUrls({ db: tdb.db, secretsKey: Buffer.from(newKey), config }, acc.id, [shp])).get(shp);
  expect(after).toBe(before);
  expect(await findLink(tdb.db, before.split("/t/")[1]!)).toMatchObject({ accountId: acc.id, shipmentId: shp });
});
