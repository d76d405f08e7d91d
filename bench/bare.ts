/**
 * The ceilings of `bun run bench`: a bare Elysia "hello" or a bare
 * `Bun.serve` on the same TLS certificate as the service, each in its own
 * process so its RSS and CPU are its own.
 *
 *   bun bench/bare.ts elysia|bun <port> <cert.pem> <key.pem>
 *
 * Prints `ready` once listening on 127.0.0.1:<port>; exits on its own once
 * its parent is gone.
 */
import { readFileSync } from "node:fs";
import { Elysia } from "elysia";

const [kind, port, certFile, keyFile] = process.argv.slice(2);
const tls = { cert: readFileSync(certFile!, "utf8"), key: readFileSync(keyFile!, "utf8") };
if (kind === "elysia") {
  new Elysia().get("/", () => "hello").listen({ port: Number(port), hostname: "127.0.0.1", tls });
} else {
  Bun.serve({ port: Number(port), hostname: "127.0.0.1", tls, fetch: () => new Response("hello") });
}
console.log("ready");
// The bench that started us is gone (even by SIGKILL, where it could not stop us): go too.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && process.exit(0), 1_000);
