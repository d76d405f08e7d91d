// Preloaded by bun:test (bunfig.toml): builds the migrated template database once per run, and
// raises the per-test default timeout: tests that start real servers and processes on a busy
// 2-core machine need more than Bun's 5 s (bunfig's [test] timeout is not honoured by Bun 1.4.5).
import { setDefaultTimeout } from "bun:test";
import { ensureTemplate } from "./db.ts";

setDefaultTimeout(30_000);
await ensureTemplate();
