import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { ConfigError } from "../../src/config/index.ts";
import { loadConfig } from "../../src/configure.ts";
import {
  DEFAULT_PASSWORD_HASH_MEMORY_KIB,
  dummyPasswordHash,
  hashPassword,
  MIN_PASSWORD_HASH_MEMORY_KIB,
  setPasswordHashMemory,
  verifyPassword,
} from "../../src/modules/accounts/password.ts";
import { Deadline, withDeadline } from "../../src/lib/deadline.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";

const memoryOf = (hash: string) => Number(/^\$argon2id\$v=19\$m=(\d+),t=2,p=1\$/.exec(hash)?.[1]);

// The preload runs every test at the smallest memory; each test here sets what it needs and puts it back.
const suiteSetting = memoryOf(await hashPassword("suite setting"));
afterEach(() => setPasswordHashMemory(suiteSetting));

describe("argon2id parameters", () => {
  test("the default is 64 MiB, t = 2, one lane: Bun.password's own argon2id defaults", async () => {
    expect(loadConfig({}).passwordHashMemoryKib).toBe(65_536);
    setPasswordHashMemory(DEFAULT_PASSWORD_HASH_MEMORY_KIB);
    const hash = await hashPassword("correct horse battery");
    expect(memoryOf(hash)).toBe(65_536);
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
  });

  test("a new setting applies to new hashes; hashes made before still verify", async () => {
    setPasswordHashMemory(MIN_PASSWORD_HASH_MEMORY_KIB);
    const before = await hashPassword("zebrafish77");
    setPasswordHashMemory(24_576);
    const after = await hashPassword("zebrafish77");
    expect([memoryOf(before), memoryOf(after)]).toEqual([19_456, 24_576]);
    expect(await verifyPassword("zebrafish77", before)).toBe(true);
    expect(await verifyPassword("zebrafish77", after)).toBe(true);
    expect(await verifyPassword("zebrafish78", after)).toBe(false);
  });

  test("the hash an unknown email is checked against follows the setting, so it costs what a real one does", async () => {
    setPasswordHashMemory(20_480);
    expect(memoryOf(await dummyPasswordHash())).toBe(20_480);
    expect(await dummyPasswordHash()).toBe(await dummyPasswordHash());
    setPasswordHashMemory(MIN_PASSWORD_HASH_MEMORY_KIB);
    expect(memoryOf(await dummyPasswordHash())).toBe(19_456);
  });

  test("less than OWASP's 19 MiB is refused: by the config at start, and by the setter", async () => {
    expect(loadConfig({ PASSWORD_HASH_MEMORY_KIB: "19456" }).passwordHashMemoryKib).toBe(19_456);
    for (const bad of ["19455", "1024", "0", "4194305", "64MiB"]) {
      let problem: string | undefined;
      try {
        loadConfig({ PASSWORD_HASH_MEMORY_KIB: bad });
      } catch (e) {
        problem = (e as ConfigError).problems.map((p) => p.variable).join(",");
      }
      expect(problem).toBe("PASSWORD_HASH_MEMORY_KIB");
    }
    expect(() => setPasswordHashMemory(19_455)).toThrow(RangeError);
    expect(memoryOf(await hashPassword("zebrafish77"))).toBe(suiteSetting);
  });
});

describe("the operator CLI", () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(() => tdb.drop());

  test("create-account --password hashes with PASSWORD_HASH_MEMORY_KIB from its environment", async () => {
    const p = Bun.spawnSync(
      [
        "bun",
        "run",
        "src/cli/admin.ts",
        "create-account",
        "--email",
        "kib@example.com",
        "--password",
        "sharma-is-my-surname",
      ],
      {
        cwd: join(import.meta.dir, "../.."),
        env: { ...process.env, DATABASE_URL: tdb.url, LOG_LEVEL: "silent", PASSWORD_HASH_MEMORY_KIB: "22528" },
      },
    );
    expect(p.exitCode).toBe(0);
    const [row] = await tdb.sql`select password_hash from accounts where email = 'kib@example.com'`;
    expect(memoryOf(row!.password_hash)).toBe(22_528);
    expect(await verifyPassword("sharma-is-my-surname", row!.password_hash)).toBe(true);
  });
});

test("hashing and verifying are off the request's database deadline: CPU work, not a database wait", async () => {
  setPasswordHashMemory(DEFAULT_PASSWORD_HASH_MEMORY_KIB);
  // A fake monotonic clock: each reading is 1 s after the one before, so the work takes time on it.
  let t = 0;
  const d = new Deadline(60_000, () => (t += 1_000));
  // The deadline's instant: what is left plus the clock reading `leftMs` just took.
  const deadlineAt = () => (d.leftMs() ?? Number.NaN) + t;
  const before = deadlineAt();
  await withDeadline(d, async () => {
    const hash = await hashPassword("correct horse battery");
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
  });
  // Two calls off the clock, each two readings 1 s apart: the deadline moved 2 s later. On the clock, it would not move.
  expect(deadlineAt()).toBe(before + 2_000);
});
