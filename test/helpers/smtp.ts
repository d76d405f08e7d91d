/**
 * A real SMTP server on 127.0.0.1 (the smtp-server package) that keeps every message it accepts, parsed with
 * mailparser: plain (no STARTTLS) or smtps with the test certificate. It can be told to refuse the next messages
 * (a 451, as a mail server short of resources answers). NETWORK SAFETY: loopback only.
 */
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { testCert } from "../webhooks/receiver.ts";

export interface Mail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  messageId: string;
}

export interface SmtpTwin {
  /** `smtp://user:pass@127.0.0.1:port` (or smtps://) for SMTP_URL. */
  url: string;
  port: number;
  messages: Mail[];
  /** Users that signed in (AUTH), in order. */
  logins: string[];
  /** The next `n` messages are refused with 451. */
  refuseNext(n: number): void;
  close(): Promise<void>;
}

/** Starts the server; `secure` serves smtps with the test certificate (its CA file: test/webhooks/receiver.ts `testCert`). */
export async function startSmtp(opts: { secure?: boolean; user?: string; pass?: string } = {}): Promise<SmtpTwin> {
  const user = opts.user ?? "alerts";
  const pass = opts.pass ?? "s3cret-pass!";
  const messages: Mail[] = [];
  const logins: string[] = [];
  let refuse = 0;
  const cert = opts.secure ? await testCert() : undefined;
  const server = new SMTPServer({
    secure: Boolean(opts.secure),
    ...(cert ? { key: cert.key, cert: cert.cert } : {}),
    disabledCommands: opts.secure ? [] : ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username !== user || auth.password !== pass) return cb(new Error("Invalid username or password"));
      logins.push(auth.username ?? "");
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      if (refuse > 0) {
        refuse--;
        stream.resume();
        stream.on("end", () => cb(Object.assign(new Error("Try again later"), { responseCode: 451 })));
        return;
      }
      simpleParser(stream).then(
        (m) => {
          messages.push({
            from: m.from?.text ?? "",
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: m.subject ?? "",
            text: m.text ?? "",
            messageId: m.messageId ?? "",
          });
          cb();
        },
        (err: Error) => cb(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `${opts.secure ? "smtps" : "smtp"}://${user}:${encodeURIComponent(pass)}@127.0.0.1:${port}`,
    port,
    messages,
    logins,
    refuseNext(n) {
      refuse = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
