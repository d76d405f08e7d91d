/**
 * The ceilings of `bun run bench`: a bare Elysia "hello" or a bare
 * `Bun.serve` on the same TLS certificate as the service, each in its own
 * process so its RSS and CPU are its own.
 *
 *   bun bench/bare.ts elysia|bun <port> <cert.pem> <key.pem>
 *   bun bench/bare.ts work <port> <cert.pem> <key.pem> <body file>
 *
 * `work` is P1's ceiling: no framework, only what any server pays for the `GET /v1/couriers` answer (reads
 * `X-API-Key` and `X-Request-Id`, hashes the key and looks it up in a Map, makes a UUIDv7 id, answers the same
 * body with the service's seven headers).
 *
 * Prints `ready` once listening on 127.0.0.1:<port>; exits on its own once
 * its parent is gone.
 */
import { readFileSync } from "node:fs";
import { Elysia } from "elysia";

const [kind, port, certFile, keyFile, bodyFile] = process.argv.slice(2);
const tls = { cert: readFileSync(certFile!, "utf8"), key: readFileSync(keyFile!, "utf8") };
if (kind === "elysia") {
  new Elysia().get("/", () => "hello").listen({ port: Number(port), hostname: "127.0.0.1", tls });
} else if (kind === "work") {
  const body = readFileSync(bodyFile!, "utf8");
  const known = new Map<string, string>();
  Bun.serve({
    port: Number(port),
    hostname: "127.0.0.1",
    tls,
    fetch: (req) => {
      const hash = new Bun.CryptoHasher("sha256").update(req.headers.get("x-api-key") ?? "").digest("hex");
      const account = known.get(hash) ?? hash;
      known.set(hash, account);
      const id = req.headers.get("x-request-id") ?? `req_${Bun.randomUUIDv7("hex")}`;
      return new Response(body, {
        headers: {
          "content-type": "application/json;charset=utf-8",
          "strict-transport-security": "max-age=31536000",
          "x-content-type-options": "nosniff",
          "x-request-id": id,
          "ratelimit-limit": "1200",
          "ratelimit-remaining": String(1199 - (account.length % 7)),
          "ratelimit-reset": "60",
        },
      });
    },
  });
} else {
  Bun.serve({ port: Number(port), hostname: "127.0.0.1", tls, fetch: () => new Response("hello") });
}
console.log("ready");
// The bench that started us is gone (even by SIGKILL, where it could not stop us): go too.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && process.exit(0), 1_000);
