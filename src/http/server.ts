/**
 * The HTTP server: Bun's `fetch` composed once from the router and the wrappers that see every request; `handle()`
 * and `listen()` share it. Why: docs/architecture.md#the-server.
 */
import type { AnyElysia } from "elysia";

export type Fetch = (request: Request) => Response | Promise<Response>;

/** The client's socket address of a request the server received; undefined for `handle()` (no socket). */
export type SocketAddressOf = (request: Request) => string | undefined;

/** Options for {@link ApiServer.listen}: Bun.serve's, without `fetch` (always the composed one). */
export interface ListenOptions {
  port: number;
  hostname: string;
  tls?: { cert: string; key: string };
  maxRequestBodySize?: number;
  /** Seconds; Bun's limit is 255. Default 30 (Elysia's). */
  idleTimeout?: number;
  development?: boolean;
  /** Default false: SO_REUSEPORT would let a second process take half the connections. */
  reusePort?: boolean;
}

type BunServer = ReturnType<typeof Bun.serve>;

/** Where the socket addresses come from: the server that {@link ApiServer.listen} started, once it has. */
export class SocketPeer {
  server: BunServer | null = null;
  readonly addressOf: SocketAddressOf = (request) => this.server?.requestIP(request)?.address;
}

export class ApiServer {
  /** The listening Bun server, null before `listen()` and after `stop()`. */
  server: BunServer | null = null;

  /** `router`: the compiled Elysia app; `fetch`: the composed handler; `peer`: filled in on `listen()`. */
  constructor(
    readonly router: AnyElysia,
    readonly fetch: Fetch,
    private readonly peer: SocketPeer = new SocketPeer(),
  ) {}

  /** Answers `request` without a socket (tests, benchmarks). */
  async handle(request: Request): Promise<Response> {
    return this.fetch(request);
  }

  /** Starts Bun's server on the composed `fetch`. @throws Bun's error when the address cannot be bound (EADDRINUSE …) */
  listen(options: ListenOptions): this {
    this.server = Bun.serve({ development: false, idleTimeout: 30, reusePort: false, ...options, fetch: this.fetch });
    this.peer.server = this.server;
    return this;
  }

  /** Stops accepting; in-flight requests finish unless `closeActive`. */
  async stop(closeActive = false): Promise<void> {
    const server = this.server;
    this.server = null;
    this.peer.server = null;
    await server?.stop(closeActive);
  }
}
