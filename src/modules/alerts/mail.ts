/** Alert emails (docs/alerts.md): the SMTP_URL transport (nodemailer) and each kind's text, plain text only. */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type * as Nodemailer from "nodemailer";
import type { Config } from "../../config/index.ts";
import { confirmPath } from "./address.ts";
import { DEACTIVATE_AFTER_FAILURES } from "../../domain/delivery.ts";
import { ALERTS_PER_WINDOW, KIND_LABELS, type AlertKind } from "./model.ts";

/** What nodemailer needs of a transport: tests may pass their own (still a real SMTP connection). */
export interface MailTransport {
  sendMail(m: { from: string; to: string; subject: string; text: string; messageId: string }): Promise<unknown>;
  close(): void;
}

/** The SMTP connection timeouts per step, ms. */
export const SMTP_TIMEOUT_MS = 15_000;

/**
 * The transport for `SMTP_URL` (docs/alerts.md#smtp-set-up), trusting `SMTP_CA_FILE` besides the system roots.
 * @throws Error (without the URL) when SMTP_URL is unset.
 */
export function smtpTransport(config: Pick<Config, "smtpUrl" | "smtpCaFile">): MailTransport {
  if (!config.smtpUrl) throw new Error("SMTP_URL is unset");
  const u = new URL(config.smtpUrl);
  const secure = u.protocol === "smtps:";
  const user = decodeURIComponent(u.username);
  // Loaded only with SMTP_URL (docs/performance.md, "Idle RSS"); Bun's `require` is synchronous.
  const { createTransport } = require("nodemailer") as typeof Nodemailer;
  return createTransport({
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: user ? { user, pass: decodeURIComponent(u.password) } : undefined,
    tls: config.smtpCaFile ? { ca: [...rootCertificates, readFileSync(config.smtpCaFile, "utf8")] } : undefined,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
}

/** The `From` of alert emails: ALERT_FROM, else `Courier Tracking <alerts@host>` with PUBLIC_BASE_URL's host. */
export function alertFrom(config: Pick<Config, "alertFrom" | "publicBaseUrl">): string {
  return config.alertFrom ?? `Courier Tracking <alerts@${new URL(config.publicBaseUrl).hostname}>`;
}

/** One alert as the sender claimed it, with what its text needs. */
export interface AlertFacts {
  id: number;
  kind: AlertKind;
  details: Record<string, unknown>;
  createdAt: Date;
  /** Webhook deactivation: the last failed attempts, newest first. */
  lastErrors?: { at: string; status: number | null; error: string | null }[];
  /** Digest: the alerts folded into it, oldest first. */
  folded?: { kind: AlertKind; details: Record<string, unknown>; created_at: string }[];
  /** Address confirmation: the raw token of the link. */
  token?: string;
}

/** Lines a digest lists at most; the rest are counted. */
const DIGEST_LINES = 50;

const str = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");

// biome-ignore lint/suspicious/noControlCharactersInRegex: a key name or webhook id is the owner's text; no control character reaches a header
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]+/g;

/** Subject and text of an alert email; `base` is PUBLIC_BASE_URL. */
export function composeAlert(a: AlertFacts, base: string): { subject: string; text: string } {
  const d = a.details;
  const settings = `Choose which alerts you receive, and where: ${base}/dashboard/alerts`;
  const lines = (subject: string, ...body: string[]) => ({
    subject: subject.replace(CONTROL_CHARACTERS, " "),
    text: [...body, "", settings, ""].join("\n"),
  });
  switch (a.kind) {
    case "webhook_deactivated": {
      const errors = (a.lastErrors ?? []).map(
        (e) =>
          `- ${new Date(e.at).toISOString()}: ${e.status ? `HTTP ${e.status}` : "no answer"}${e.error ? ` (${e.error.slice(0, 200)})` : ""}`,
      );
      return lines(
        `Webhook ${str(d.webhook_id)} was deactivated`,
        `Your webhook ${str(d.webhook_id)} (${hostOf(str(d.url))}) was deactivated after ${DEACTIVATE_AFTER_FAILURES} consecutive failed deliveries; it receives nothing until you reactivate it.`,
        "",
        errors.length ? `Last errors:\n${errors.join("\n")}` : "No error details were recorded.",
        "",
        `Fix the receiver, then reactivate the webhook: ${base}/dashboard/webhooks/${str(d.webhook_id)}`,
      );
    }
    case "quota_80":
    case "quota_100": {
      const used = a.kind === "quota_100" ? "used up" : `${a.kind.slice("quota_".length)} % used`;
      return lines(
        `Monthly quota ${used} (${str(d.period)})`,
        `Your account has ${used} of its monthly quota of ${str(d.quota)} tracking requests for ${str(d.period)} (UTC).`,
        a.kind === "quota_100"
          ? "Further tracking requests are refused (402 QUOTA_EXCEEDED) until the month ends or you upgrade."
          : "At 100 % further tracking requests are refused (402 QUOTA_EXCEEDED).",
        `Usage and plans: ${base}/dashboard/billing`,
      );
    }
    case "secret_rotated":
      return lines(
        "Webhook signing secret rotated",
        `The webhook signing secret of your account was rotated at ${str(d.at)}. Every delivery from now on is signed with the new secret.`,
        `If you did not do this, rotate it again and check your API keys: ${base}/dashboard/keys`,
      );
    case "api_key_created":
      return lines(
        `API key created: ${str(d.name)}`,
        `A new API key "${str(d.name)}" (${str(d.prefix)}…) was created on your account.`,
        `If you did not do this, revoke it: ${base}/dashboard/keys`,
      );
    case "digest":
      return lines(...digestText(a, base));
    case "address_confirmation":
      return confirmationText(a, base);
    case "test":
      return lines(
        "Test email from Courier Tracking",
        "This is the test email you asked for: alert emails reach this address.",
      );
  }
  return lines(KIND_LABELS[a.kind as AlertKind] ?? "Alert", "");
}

/** A digest's subject and lines: the alerts folded into it, at most {@link DIGEST_LINES} of them. */
function digestText(a: AlertFacts, base: string): [string, ...string[]] {
  const folded = a.folded ?? [];
  const items = folded
    .slice(0, DIGEST_LINES)
    .map(
      (f) =>
        `- ${new Date(f.created_at).toISOString()}: ${composeAlert({ ...f, id: 0, createdAt: a.createdAt }, base).subject}`,
    );
  if (folded.length > DIGEST_LINES) items.push(`- … and ${folded.length - DIGEST_LINES} more`);
  return [
    `${folded.length} more alerts: ${KIND_LABELS[a.details.kind as AlertKind] ?? str(a.details.kind)}`,
    `Your account had more than ${ALERTS_PER_WINDOW} alerts of this kind within an hour; the ones after the ${ALERTS_PER_WINDOW}th are listed here instead of one email each:`,
    "",
    ...items,
    "",
    `Every alert is also listed at ${base}/dashboard/alerts`,
  ];
}

/** The confirmation email: the link, and nothing an address that did not ask could be flooded with. */
function confirmationText(a: AlertFacts, base: string): { subject: string; text: string } {
  return {
    subject: "Confirm your alert email address",
    text: [
      "Someone asked for the alert emails of a Courier Tracking account to be sent to this address.",
      `To confirm, open this link (valid until ${str(a.details.expires_at)}, once): ${base}${confirmPath(a.token ?? "")}`,
      "",
      "If you did not ask for this, ignore this email: nothing is sent here until the link is opened.",
      "",
    ].join("\n"),
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}
