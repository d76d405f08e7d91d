/**
 * A loopback TCP relay in front of PostgreSQL that a test can take away and
 * bring back on the same port: a real database outage (every connection
 * drops, new ones are refused) without touching the shared server. It can
 * also black-hole the traffic (a network partition): connections stay open,
 * nothing reaches either side, and what was sent meanwhile arrives once the
 * partition heals, as TCP's retransmissions would deliver it.
 */
import type { Socket, TCPSocketListener } from "bun";

export interface PgRelay {
  /** The database URL through the relay. */
  url: string;
  /** Drops every connection and stops listening (the "outage"). */
  stop(): void;
  /** Listens again on the same port. */
  start(): void;
  /** Starts a partition: bytes in either direction are held, new connections get no answer. */
  blackhole(): void;
  /** Ends the partition: held bytes are delivered, held connections go through. */
  heal(): void;
}

interface Side {
  upstream?: Socket<unknown>;
  /** Client bytes not yet sent upstream (no upstream yet, or partitioned). */
  toServer: Uint8Array[];
  /** Server bytes held during a partition. */
  toClient: Uint8Array[];
  client: Socket<Side>;
}

export function startPgRelay(databaseUrl: string): PgRelay {
  const target = new URL(databaseUrl);
  const sockets = new Set<{ end(): void }>();
  const sides = new Set<Side>();
  let port = 0;
  let holding = false;
  let server: TCPSocketListener<Side> | undefined;

  const openUpstream = async (side: Side) => {
    const upstream = await Bun.connect({
      hostname: target.hostname,
      port: Number(target.port || 5432),
      socket: {
        data: (_s, d) => {
          if (holding) side.toClient.push(new Uint8Array(d));
          else void side.client.write(d);
        },
        close: () => void side.client.end(),
        error: () => void side.client.end(),
      },
    });
    sockets.add(upstream);
    side.upstream = upstream;
    flush(side);
  };

  const flush = (side: Side) => {
    if (holding) return;
    for (const d of side.toClient.splice(0)) side.client.write(d);
    if (side.upstream) for (const d of side.toServer.splice(0)) side.upstream.write(d);
  };

  const listen = () => {
    server = Bun.listen<Side>({
      hostname: "127.0.0.1",
      port,
      socket: {
        async open(client) {
          sockets.add(client);
          const side: Side = { toServer: [], toClient: [], client };
          client.data = side;
          sides.add(side);
          if (!holding) await openUpstream(side);
        },
        data(client, d) {
          const side = client.data;
          if (side.upstream && !holding) side.upstream.write(d);
          else side.toServer.push(new Uint8Array(d));
        },
        close: (client) => {
          sides.delete(client.data);
          client.data.upstream?.end();
        },
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
      sides.clear();
    },
    start: listen,
    blackhole() {
      holding = true;
    },
    heal() {
      holding = false;
      for (const side of sides) {
        if (side.upstream) flush(side);
        else void openUpstream(side);
      }
    },
  };
}
