/**
 * A loopback TCP relay in front of PostgreSQL that a test can take away and
 * bring back on the same port: a real database outage (every connection
 * drops, new ones are refused) without touching the shared server.
 */
import type { Socket, TCPSocketListener } from "bun";

export interface PgRelay {
  /** The database URL through the relay. */
  url: string;
  /** Drops every connection and stops listening (the "outage"). */
  stop(): void;
  /** Listens again on the same port. */
  start(): void;
}

export function startPgRelay(databaseUrl: string): PgRelay {
  const target = new URL(databaseUrl);
  const sockets = new Set<{ end(): void }>();
  let port = 0;
  let server: TCPSocketListener<{ upstream?: Socket<unknown>; pending: Uint8Array[] }> | undefined;
  const listen = () => {
    server = Bun.listen<{ upstream?: Socket<unknown>; pending: Uint8Array[] }>({
      hostname: "127.0.0.1",
      port,
      socket: {
        async open(client) {
          sockets.add(client);
          client.data = { pending: [] };
          const upstream = await Bun.connect({
            hostname: target.hostname,
            port: Number(target.port || 5432),
            socket: {
              data: (_s, d) => void client.write(d),
              close: () => void client.end(),
              error: () => void client.end(),
            },
          });
          sockets.add(upstream);
          client.data.upstream = upstream;
          for (const d of client.data.pending) upstream.write(d);
        },
        data(client, d) {
          if (client.data.upstream) client.data.upstream.write(d);
          else client.data.pending.push(new Uint8Array(d));
        },
        close: (client) => void client.data.upstream?.end(),
      },
    });
    port = server.port;
  };
  listen();
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    stop() {
      server?.stop(true);
      server = undefined;
      for (const s of sockets) s.end();
      sockets.clear();
    },
    start: listen,
  };
}
