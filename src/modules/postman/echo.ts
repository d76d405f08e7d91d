/** The sandbox echo receiver (docs/webhooks.md#the-sandbox-echo-receiver--decision). */
import { Elysia } from "elysia";
import type { Config } from "../../config/index.ts";
import { generatedCertFile } from "../../http/tls.ts";

export const SANDBOX_ECHO_PATH = "/sandbox/webhook-echo";

/** Loopback, allowed for the sandbox echo URL only. */
export const ECHO_LOOPBACK_CIDRS: readonly string[] = ["127.0.0.0/8", "::1/128"];

export interface SandboxEcho {
  /** The echo's URL in the normalised form a stored webhook URL has (WHATWG `URL.toString()`). */
  url: string;
  /** The service's own certificate (PEM file), trusted for deliveries to the echo; unset behind a TLS-terminating proxy. */
  caFile?: string;
}

type EchoConfig = Pick<Config, "courierMode" | "publicBaseUrl" | "tls" | "trustProxy" | "dataDir">;

/** The sandbox echo receiver of this configuration, or undefined when there is none (live mode, or an http base URL). */
export function sandboxEcho(config: EchoConfig): SandboxEcho | undefined {
  if (config.courierMode !== "sandbox" || !config.publicBaseUrl.startsWith("https://")) return undefined;
  const caFile =
    config.tls?.certFile ?? (config.trustProxy === undefined ? generatedCertFile(config.dataDir) : undefined);
  return { url: new URL(`${config.publicBaseUrl}${SANDBOX_ECHO_PATH}`).toString(), ...(caFile ? { caFile } : {}) };
}

/** An event id as the delivery headers carry it; anything else is not echoed. */
const EVENT_ID = /^evt_[A-Za-z0-9]{1,64}$/;

/** The echo route (sandbox only); stores nothing, never reads the body, echoes the delivery's event id. */
export function sandboxEchoModule(deps: { config: EchoConfig }) {
  const self = new Elysia({ name: "sandbox-echo" });
  if (deps.config.courierMode !== "sandbox") return self;
  return self.post(
    SANDBOX_ECHO_PATH,
    ({ request }) => {
      const id = request.headers.get("x-webhook-event-id");
      return {
        success: true as const,
        data: { received: true as const, event_id: id && EVENT_ID.test(id) ? id : null },
      };
    },
    { parse: "none", detail: { hide: true } },
  );
}
