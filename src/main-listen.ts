/** Opening main.ts's ports: a port in use becomes one clear line (docs/deployment.md#start-up-and-shutdown). */
import type { Config } from "./config/index.ts";
import type { TlsMaterial } from "./http/tls.ts";
import { longestAnswerMs } from "./modules/couriers/registry.ts";

/** Another process holds the port; the message is the one line the operator reads. */
export class PortInUseError extends Error {}

/** Runs `listen`; EADDRINUSE becomes {@link PortInUseError} naming the variable, address and port. */
export function listenOrExplain<T>(where: { port: number; host: string; variable?: string }, listen: () => T): T {
  try {
    return listen();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== "EADDRINUSE" && !/in use/i.test((err as Error).message ?? "")) throw err;
    throw new PortInUseError(
      `${where.variable ?? "PORT"}=${where.port}: ${where.host}:${where.port} is already in use by another process; not starting (stop it or choose another port)`,
    );
  }
}

/** Bun's serve options for the public port; `tls` undefined when a proxy terminates TLS. */
export function publicListenOptions(config: Config, tls: TlsMaterial | undefined) {
  return {
    port: config.port,
    hostname: config.host,
    // A port in use must stop the start, not share connections (docs/deployment.md#start-up-and-shutdown).
    reusePort: false,
    maxRequestBodySize: 1024 * 1024,
    // Above the longest answer (a queued asynchronous lookup); Bun's limit is 255 s.
    idleTimeout: Math.min(255, Math.ceil(longestAnswerMs(config) / 1000) + 5),
    development: false,
    ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
  };
}
