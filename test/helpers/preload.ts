// Preloaded by bun:test (bunfig.toml): builds the migrated template database once per run.
import { ensureTemplate } from "./db.ts";

await ensureTemplate();
