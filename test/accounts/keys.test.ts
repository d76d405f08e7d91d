/** API keys (src/modules/accounts/keys.ts): the stored hash stays SHA-256 hex, whichever hasher computes it. */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { generateApiKey, hashApiKey, looksLikeApiKey } from "../../src/modules/accounts/keys.ts";

describe("API key hashing", () => {
  test("api_keys.key_hash is the SHA-256 hex of the key (keys stored before keep authenticating)", () => {
    for (let i = 0; i < 20; i++) {
      const key = generateApiKey();
      expect(looksLikeApiKey(key)).toBe(true);
      expect(hashApiKey(key)).toBe(createHash("sha256").update(key).digest("hex"));
    }
    // A fixed vector, so a change of algorithm or encoding cannot pass by agreeing with itself.
    expect(hashApiKey("ctk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).toBe(
      createHash("sha256").update("ctk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").digest("hex"),
    );
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
