// Preloaded by bun:test (bunfig.toml): builds the migrated template database once per run, and
// raises the per-test default timeout: tests that start real servers and processes on a busy
// 2-core machine need more than Bun's 5 s (bunfig's [test] timeout is not honoured by Bun 1.4.5).
import { setDefaultTimeout } from "bun:test";
import { ensureTemplate } from "./db.ts";
import { MIN_PASSWORD_HASH_MEMORY_KIB, setPasswordHashMemory } from "../../src/modules/accounts/password.ts";

setDefaultTimeout(30_000);
// Password hashes at the smallest memory the service accepts (PASSWORD_HASH_MEMORY_KIB), in this process and in
// the services and CLIs the tests start (they inherit the environment): argon2id at 64 MiB was a large share of
// the suite's CPU. test/accounts/password.test.ts checks the default and the setting themselves.
process.env.PASSWORD_HASH_MEMORY_KIB ??= String(MIN_PASSWORD_HASH_MEMORY_KIB);
setPasswordHashMemory(Number(process.env.PASSWORD_HASH_MEMORY_KIB));
await ensureTemplate();
