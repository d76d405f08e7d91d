/** `bun run rotate-secrets`: re-encrypts every signing secret, webhook custom header and NDR action's consignee details (docs/deployment.md#rotating-secrets_key). */
import { ConfigError } from "../config/index.ts";
import { configFromProcess } from "../configure.ts";
import { DatabaseUnreachableError, openDatabase } from "../db/client.ts";
import { migrateDatabase } from "../db/migrate.ts";
import { createLogger } from "../lib/log.ts";
import { loadSecretsKey } from "../secrets/key.ts";
import { reencryptSecrets } from "../modules/accounts/secret-rotation.ts";
import { reencryptHeaders } from "../modules/webhooks/headers.ts";
import { reencryptActionDetails } from "../modules/actions/service.ts";

const boot = createLogger("info", { service: "courier-tracking-api", component: "rotate-secrets" });
let code = 1;
try {
  const config = configFromProcess();
  const log = createLogger(config.logLevel, { service: "courier-tracking-api", component: "rotate-secrets" });
  const { key } = loadSecretsKey(config);
  if (!key.previous)
    throw new ConfigError(
      "SECRETS_KEY_PREVIOUS",
      "is required: set SECRETS_KEY to the new key and SECRETS_KEY_PREVIOUS to the old one",
    );
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log,
    max: 2,
    connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
  });
  try {
    await migrateDatabase(database.url);
    const headers = await reencryptHeaders(database.db, key);
    const actions = await reencryptActionDetails(database.db, key);
    const secrets = await reencryptSecrets(database.db, key, { storeCheck: headers.failed + actions.failed === 0 });
    const report = {
      ...secrets,
      failed: secrets.failed + headers.failed + actions.failed,
      headersReEncrypted: headers.reEncrypted,
      actionDetailsReEncrypted: actions.reEncrypted,
    };
    if (report.failed)
      log.error("some secrets decrypt with neither key; the key check value was not changed", { ...report });
    else
      log.info("every webhook secret is under the new SECRETS_KEY; SECRETS_KEY_PREVIOUS may now be removed", {
        ...report,
      });
    code = report.failed ? 1 : 0;
  } finally {
    await database.close();
  }
} catch (err) {
  if (err instanceof ConfigError) boot.error(err.message, { problems: err.problems });
  else if (err instanceof DatabaseUnreachableError) boot.error(err.message);
  else boot.error("rotation failed", { error: err as Error });
}
process.exit(code);
