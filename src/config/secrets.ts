/** Configured secret values, for taking them out of third-party text about to be logged (main.ts). */
import { COURIER_CREDENTIAL, type Config } from "./index.ts";

/** Every secret value in `config` (of 4 characters or more), longest first. */
function configSecrets(config: Config): string[] {
  const out: (string | undefined)[] = [config.secretsKey, config.secretsKeyPrevious, config.metricsToken];
  for (const url of [config.databaseUrl, config.smtpUrl]) {
    if (!url) continue;
    try {
      const u = new URL(url);
      out.push(u.password, u.password ? decodeURIComponent(u.password) : undefined);
    } catch {
      // loadConfig refuses a URL that does not parse.
    }
  }
  if (config.billing.provider === "stripe") out.push(config.billing.secretKey, config.billing.webhookSecret);
  for (const [k, v] of Object.entries(config.courierEnv)) if (COURIER_CREDENTIAL.test(k)) out.push(v);
  return [...new Set(out.filter((v): v is string => Boolean(v && v.length >= 4)))].sort((a, b) => b.length - a.length);
}

/** `text` with every value of {@link configSecrets} replaced by `[redacted]`. */
export function withoutSecrets(text: string, config: Config): string {
  let out = text;
  for (const s of configSecrets(config)) out = out.replaceAll(s, "[redacted]");
  return out;
}
