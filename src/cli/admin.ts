/** Operator CLI (`bun run admin help`): each command prints one JSON object; errors `{"error"}`, exit 1. */
import { parseArgs } from "node:util";
import { ConfigError, type Config } from "../config/index.ts";
import { configFromProcess } from "../configure.ts";
import { openDatabase, type Database } from "../db/client.ts";
import { migrateDatabase } from "../db/migrate.ts";
import { createLogger } from "../lib/log.ts";
import { setPasswordHashMemory } from "../modules/accounts/password.ts";
import { runAdmin, UsageError, type Args } from "./commands.ts";

export const USAGE = `Usage: bun run admin <command> [arguments] [flags]

An <account> is its email or its id (acc_…); --email E works wherever <account> does.
Every command prints one JSON object; errors print {"error": "..."} and exit 1.

Accounts and keys
  create-account --email E [--plan P] [--password PW]   new account and its first key: {account_id, key_id, api_key}
  create-key <account> [--name N]                       another key: {account_id, key_id, api_key}
  list-keys <account>                                   key ids, names, prefixes, created, last used, revoked (never a key)
  revoke-key <account> <key-id>                         (or --key-id K)
  show-account <account>                                the account, this month's usage, its keys, a pending plan request
  set-status <account> active|needs_attention           (or --status S)
  set-usage <account> <n>                               this month's /v1/track count (or --used N)
  password-link <account>                               a one-time link (1 hour) to set a new password: {url, expires_at}

Plans and billing (docs/billing.md)
  set-plan <account> <plan>                             (or --plan P); grants a pending request for that plan
  list-upgrade-requests [--all]                         pending plan requests from the dashboard (--all: every status)
  approve-upgrade <request-id> [--note TEXT]            applies the requested plan
  reject-upgrade <request-id> [--note TEXT]             keeps the plan; the note is shown to the customer

Predictions (docs/predictions.md)
  rebuild-transit-stats                                 rebuild the transit statistics now: {deliveries, rows, batches, ms}

Upgrades (docs/releases.md, "Expand and contract")
  show-compat                                           the oldest storage layout a process may still use: {compat_level, build_level}
  contract                                              once no process of an older release runs: stop writing the old
                                                        structures: {compat_level, previous}

Plans: free, starter, pro, growth, business.
  help, --help, -h                                      this text
`;

const OPTIONS = {
  email: { type: "string" },
  plan: { type: "string" },
  password: { type: "string" },
  name: { type: "string" },
  "key-id": { type: "string" },
  status: { type: "string" },
  used: { type: "string" },
  note: { type: "string" },
  all: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function parseStrict(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Splits argv into command, positionals and flags. @throws UsageError for an unknown or valueless flag */
export function parseCommandLine(argv: string[]): { command: string; args: Args } {
  const parsed = parseStrict(argv);
  const [command = "", ...positionals] = parsed.positionals;
  return { command: parsed.values.help ? "help" : command, args: { positionals, flags: parsed.values } };
}

/** Where {@link runCli} writes whole lines (no trailing newline): the JSON object or the usage; an unexpected error's message. */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * What `bun run admin <argv>` does, short of exiting: returns the exit code (0, or 1 after printing `{"error"}`).
 * `config()` is read only by a command that needs it (the entry: the process's environment, via src/config/index.ts). The process entry below is this plus `process.exit`; tests call it for the commands whose
 * point is not the process itself.
 */
export async function runCli(argv: string[], config: () => Config, io: CliOutput): Promise<number> {
  let database: Database | undefined;
  try {
    const { command, args } = parseCommandLine(argv);
    if (command === "help") {
      io.out(USAGE.trimEnd());
      return 0;
    }
    const settings = config();
    setPasswordHashMemory(settings.passwordHashMemoryKib);
    database = await openDatabase({
      databaseUrl: settings.databaseUrl,
      dataDir: settings.dataDir,
      log: createLogger("silent"),
      max: 2,
    });
    await migrateDatabase(database.url);
    io.out(JSON.stringify(await runAdmin(database.db, command, args, Date.now(), settings.publicBaseUrl)));
    return 0;
  } catch (err) {
    const known = err instanceof UsageError || err instanceof ConfigError;
    io.out(JSON.stringify({ error: known ? (err as Error).message : "unexpected error (see stderr)" }));
    if (!known) io.err((err as Error).message);
    return 1;
  } finally {
    await database?.close();
  }
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2), configFromProcess, {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
  process.exit(code);
}
