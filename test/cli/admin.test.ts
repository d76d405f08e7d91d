import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCli } from "../../src/cli/admin.ts";
import { loadConfig } from "../../src/configure.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

// The CLI against a real database, as an operator would run it. The exit code and the one line on stdout are the
// process's contract, so the commands that show it (the first create-account, the errors, a password on the
// command line, help) run as real processes; the others run the same entry (runCli) in this process, which saves
// a start of the CLI (about 1,000 modules) per command.
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(() => tdb.drop());

const ROOT = join(import.meta.dir, "../..");
/**
 * A start of the CLI is about 0.3 s of CPU; with the rest of the suite on the same two cores it has taken
 * 1–2.5 s, so the tests here keep a budget in line with what they start, not the suite's default.
 */
const CLI_TEST_MS = 120_000;
interface CliRun {
  code: number;
  out: Record<string, unknown>;
  stdout: string;
}
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
const cliEnv = () => ({ ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: "silent" });

/** `bun run src/cli/admin.ts …` as its own process. */
function adminProcess(...args: string[]): CliRun {
  const p = Bun.spawnSync(["bun", "run", "src/cli/admin.ts", ...args], { cwd: ROOT, env: cliEnv() });
  const stdout = p.stdout.toString();
  return { code: p.exitCode ?? -1, out: lastJson(stdout), stdout };
}

/** The CLI's entry in this process: what the process would print and the code it would exit with. */
async function admin(...args: string[]): Promise<CliRun> {
  let stdout = "";
  const code = await runCli(args, () => loadConfig(cliEnv()), {
    out: (line) => (stdout += `${line}\n`),
    err: () => {},
  });
  return { code, out: lastJson(stdout), stdout };
}

describe("bun run admin", () => {
  test(
    "create-account prints exactly one JSON object with the account id and a working key",
    async () => {
      const r = adminProcess("create-account", "--email", "ops@example.com", "--plan", "growth");
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split("\n")).toHaveLength(1);
      expect(r.out.account_id).toMatch(/^acc_[0-9a-f]{32}$/);
      expect(r.out.api_key).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    },
    CLI_TEST_MS,
  );

  test(
    "set-plan, set-status, set-usage, create-key, revoke-key, show-account",
    async () => {
      expect((await admin("set-plan", "--email", "ops@example.com", "--plan", "pro")).out).toMatchObject({
        plan: "pro",
        email: "ops@example.com",
      });
      expect(
        (await admin("set-status", "--email", "ops@example.com", "--status", "needs_attention")).out,
      ).toMatchObject({
        status: "needs_attention",
      });
      expect((await admin("set-usage", "--email", "ops@example.com", "--used", "42")).out).toMatchObject({ used: 42 });
      expect((await admin("show-account", "--email", "ops@example.com")).out).toMatchObject({
        used: 42,
        plan: "pro",
        status: "needs_attention",
      });
      const k = (await admin("create-key", "--email", "ops@example.com", "--name", "ci")).out;
      expect(k.key_id).toMatch(/^key_/);
      expect((await admin("revoke-key", "--email", "ops@example.com", "--key-id", String(k.key_id))).out).toMatchObject(
        {
          revoked: true,
        },
      );
    },
    CLI_TEST_MS,
  );

  test(
    "errors print {error} and exit 1; the password never appears in output",
    async () => {
      const dup = adminProcess("create-account", "--email", "ops@example.com");
      expect(dup.code).toBe(1);
      expect(dup.out.error).toMatch(/already exists/);
      expect((await admin("set-plan", "--email", "ops@example.com", "--plan", "gold")).code).toBe(1);
      expect((await admin("set-plan", "--email", "nobody@example.com", "--plan", "pro")).out.error).toMatch(
        /no account/,
      );
      expect((await admin("launch-rockets")).code).toBe(1);
      const withPw = adminProcess("create-account", "--email", "pw@example.com", "--password", "s3cret-Passw0rd");
      expect(withPw.code).toBe(0);
      expect(withPw.stdout).not.toContain("s3cret-Passw0rd");
      // The dashboard's password policy applies to operator-created accounts too.
      const weak = adminProcess("create-account", "--email", "weak@example.com", "--password", "password12");
      expect(weak.code).toBe(1);
      expect(String(weak.out.error)).toMatch(/commonly used/);
      expect(weak.stdout).not.toContain('password12"');
      expect((await admin("show-account", "--email", "weak@example.com")).code).toBe(1);
    },
    CLI_TEST_MS,
  );
});

describe("bun run admin: help, keys and plan requests", () => {
  test(
    "help, --help and -h print the usage (every command) and exit 0 without touching a database",
    async () => {
      const env = { ...process.env, DATABASE_URL: "postgres://127.0.0.1:1/none", LOG_LEVEL: "silent" };
      // `help` as a process; the other spellings through the same entry in this process.
      for (const args of [["help"], ["--help"], ["-h"], ["set-plan", "--help"]]) {
        let out = "";
        let code: number | null;
        if (args[0] === "help") {
          const p = Bun.spawnSync(["bun", "run", "src/cli/admin.ts", ...args], { cwd: ROOT, env });
          [out, code] = [p.stdout.toString(), p.exitCode];
        } else code = await runCli(args, () => loadConfig(env), { out: (line) => (out += `${line}\n`), err: () => {} });
        expect(code).toBe(0);
        expect(out).toStartWith("Usage: bun run admin <command>");
        for (const c of [
          "create-account",
          "create-key",
          "list-keys",
          "revoke-key",
          "show-account",
          "set-plan",
          "set-status",
          "set-usage",
          "list-upgrade-requests",
          "approve-upgrade",
          "reject-upgrade",
        ])
          expect(out).toContain(c);
      }
    },
    CLI_TEST_MS,
  );

  test(
    "an unknown flag or a flag without its value is an error, not a guess",
    async () => {
      const bad = await admin("show-account", "--email", "ops@example.com", "--verbose");
      expect(bad.code).toBe(1);
      expect(String(bad.out.error)).toContain("--verbose");
      expect((await admin("show-account", "--email")).code).toBe(1);
    },
    CLI_TEST_MS,
  );

  test(
    "create-account prints the key id, so the first key can be revoked; list-keys and show-account list keys, never a key",
    async () => {
      const c = await admin("create-account", "--email", "keys@example.com");
      expect(c.code).toBe(0);
      expect(c.out.key_id).toMatch(/^key_[0-9a-f]{32}$/);
      const second = (await admin("create-key", "keys@example.com", "--name", "ci")).out;
      const listed = await admin("list-keys", "keys@example.com");
      expect(listed.code).toBe(0);
      expect(listed.out).toMatchObject({ account_id: c.out.account_id, count: 2 });
      const keys = listed.out.keys as Record<string, unknown>[];
      expect(keys.map((k) => k.key_id).sort()).toEqual([c.out.key_id, second.key_id].sort());
      expect(keys.find((k) => k.key_id === second.key_id)).toMatchObject({
        name: "ci",
        last_used_at: null,
        revoked_at: null,
      });
      expect(keys[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(listed.stdout).not.toContain(String(c.out.api_key));
      expect(listed.stdout).not.toContain(String(second.api_key));

      // The first key, by the id create-account printed; the account named by its id.
      expect((await admin("revoke-key", String(c.out.account_id), String(c.out.key_id))).out).toMatchObject({
        revoked: true,
        key_id: c.out.key_id,
      });
      const shown = await admin("show-account", "keys@example.com");
      expect(shown.out).toMatchObject({ email: "keys@example.com", plan: "free", pending_request: null });
      expect((shown.out.keys as Record<string, unknown>[]).find((k) => k.key_id === c.out.key_id)!.revoked_at).toMatch(
        /^\d{4}-/,
      );
      expect(shown.stdout).not.toContain(String(c.out.api_key));
      expect(shown.stdout).not.toContain(String(second.api_key));
    },
    CLI_TEST_MS,
  );

  test(
    "set-plan takes <account> <plan>; a dashboard request is listed, approved once, and only then changes the plan",
    async () => {
      expect((await admin("set-plan", "keys@example.com", "starter")).out).toMatchObject({ plan: "starter" });
      const { findAccountByEmail } = await import("../../src/modules/accounts/service.ts");
      const { recordRequest } = await import("../../src/modules/billing/requests.ts");
      const acc = (await findAccountByEmail(tdb.db, "keys@example.com"))!;
      const req = await recordRequest(tdb.db, acc.id, "starter", "business");

      const listed = await admin("list-upgrade-requests");
      expect(listed.out.requests).toEqual([
        expect.objectContaining({
          request_id: req.id,
          email: "keys@example.com",
          from_plan: "starter",
          to_plan: "business",
          status: "pending",
          current_plan: "starter",
        }),
      ]);
      expect((await admin("show-account", acc.id)).out).toMatchObject({
        plan: "starter",
        pending_request: { request_id: req.id, to_plan: "business" },
      });

      expect((await admin("approve-upgrade", req.id)).out).toMatchObject({
        request_id: req.id,
        status: "approved",
        to_plan: "business",
      });
      expect((await admin("show-account", acc.id)).out).toMatchObject({ plan: "business", pending_request: null });
      const again = await admin("approve-upgrade", req.id);
      expect(again.code).toBe(1);
      expect(again.out.error).toMatch(/no pending request/);
      expect((await admin("list-upgrade-requests")).out).toMatchObject({ count: 0 });
      expect((await admin("list-upgrade-requests", "--all")).out.count).toBe(1);

      // Rejected: the plan stays. set-plan to the requested plan grants a pending request.
      const r2 = await recordRequest(tdb.db, acc.id, "business", "free");
      expect((await admin("reject-upgrade", r2.id, "--note", "contract runs to March")).out).toMatchObject({
        status: "rejected",
        note: "contract runs to March",
      });
      expect((await admin("show-account", acc.id)).out).toMatchObject({ plan: "business" });
      const r3 = await recordRequest(tdb.db, acc.id, "business", "growth");
      expect((await admin("set-plan", acc.id, "growth")).out).toMatchObject({ plan: "growth" });
      expect(
        ((await admin("list-upgrade-requests", "--all")).out.requests as { request_id: string; status: string }[]).find(
          (r) => r.request_id === r3.id,
        )!.status,
      ).toBe("approved");
    },
    CLI_TEST_MS,
  );
});
