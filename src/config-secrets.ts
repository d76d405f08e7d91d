/**
 * Configured secret values, for taking them out of text that is about to be logged (main.ts: a driver's or a
 * library's error at start-up may quote configuration, such as a connection string).
 */
import { COURIER_CREDENTIAL, type Config } from "./config.ts";

/**
 * Every secret value in `config` (the database and SMTP passwords, SECRETS_KEY and its predecessor, METRICS_TOKEN,
 * Stripe's keys, courier credentials), longest first: what {@link withoutSecrets} removes from text that
 * is about to be logged.
 */
export function configSecrets(config: Config): string[] {
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
  // Very short values (a one-letter password) would blank out ordinary words; such a secret is no secret anyway.
  return [...new Set(out.filter((v): v is string => Boolean(v && v.length >= 4)))].sort((a, b) => b.length - a.length);
}

/**
 * `text` with every value of {@link configSecrets} replaced by `[redacted]`: for messages the service did not
 * write itself (a driver's or a library's error at start-up) before they are logged.
 */
export function withoutSecrets(text: string, config: Config): string {
  let out = text;
  for (const s of configSecrets(config)) out = out.replaceAll(s, "[redacted]");
  return out;
}
