import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

// The CLI runs as a real process against a real database, as an operator would run it.
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

const ROOT = join(import.meta.dir, "../..");
function admin(...args: string[]): { code: number; out: Record<string, unknown>; stdout: string } {
  const p = Bun.spawnSync(["bun", "run", "src/cli/admin.ts", ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: "silent" } });
  const stdout = p.stdout.toString();
  return { code: p.exitCode ?? -1, out: JSON.parse(stdout.trim().split("\n").at(-1)!), stdout };
}

describe("bun run admin", () => {
  test("create-account prints exactly one JSON object with the account id and a working key", () => {
    const r = admin("create-account", "--email", "ops@example.com", "--plan", "growth");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.out.account_id).toMatch(/^acc_[0-9a-f]{32}$/);
    expect(r.out.api_key).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
  });

  test("set-plan, set-status, set-usage, create-key, revoke-key, show-account", () => {
    expect(admin("set-plan", "--email", "ops@example.com", "--plan", "pro").out).toMatchObject({ plan: "pro", email: "ops@example.com" });
    expect(admin("set-status", "--email", "ops@example.com", "--status", "needs_attention").out).toMatchObject({ status: "needs_attention" });
    expect(admin("set-usage", "--email", "ops@example.com", "--used", "42").out).toMatchObject({ used: 42 });
    expect(admin("show-account", "--email", "ops@example.com").out).toMatchObject({ used: 42, plan: "pro", status: "needs_attention" });
    const k = admin("create-key", "--email", "ops@example.com", "--name", "ci").out;
    expect(k.key_id).toMatch(/^key_/);
    expect(admin("revoke-key", "--email", "ops@example.com", "--key-id", String(k.key_id)).out).toMatchObject({ revoked: true });
  });

  test("errors print {error} and exit 1; the password never appears in output", () => {
    const dup = admin("create-account", "--email", "ops@example.com");
    expect(dup.code).toBe(1);
    expect(dup.out.error).toMatch(/already exists/);
    expect(admin("set-plan", "--email", "ops@example.com", "--plan", "gold").code).toBe(1);
    expect(admin("set-plan", "--email", "nobody@example.com", "--plan", "pro").out.error).toMatch(/no account/);
    expect(admin("launch-rockets").code).toBe(1);
    const withPw = admin("create-account", "--email", "pw@example.com", "--password", "s3cret-Passw0rd");
    expect(withPw.code).toBe(0);
    expect(withPw.stdout).not.toContain("s3cret-Passw0rd");
  });
});
