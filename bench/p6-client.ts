/**
 * P6 load generator of `bun run bench` (its own process): `N` concurrent
 * `GET /v1/track` lookups, each on its own TLS connection, and how each
 * ended: a status code, or `reset` when the connection closed without an
 * answer. Prints one JSON line `{"statuses":{…},"retry_after":[…],"seconds":…}`.
 *
 *   bun bench/p6-client.ts <base> <n> <keys-file> <path-prefix>
 *
 * Each request's tracking number is `<path-prefix><i padded to 6>9`.
 */
import { readFileSync } from "node:fs";
import { request } from "node:https";

const [base, nArg, keysFile, prefix] = process.argv.slice(2);
const n = Number(nArg);
const keys = readFileSync(keysFile!, "utf8").trim().split("\n");
const started = performance.now();
const statuses: Record<string, number> = {};
const retryAfter = new Set<string>();
const slowest: number[] = [];

function one(i: number): Promise<void> {
  const url = new URL(`${base}/v1/track?courier=delhivery&tracking_number=${prefix}${String(i).padStart(6, "0")}9`);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const done = (what: string) => {
      statuses[what] = (statuses[what] ?? 0) + 1;
      slowest.push(performance.now() - t0);
      resolve();
    };
    // agent: false → one connection per request, as N independent clients would have.
    const req = request(
      url,
      { agent: false, rejectUnauthorized: false, headers: { "x-api-key": keys[i % keys.length]! } },
      (res) => {
        if (res.headers["retry-after"]) retryAfter.add(String(res.headers["retry-after"]));
        res.resume();
        res.on("end", () => done(String(res.statusCode)));
        res.on("error", () => done("reset"));
      },
    );
    req.on("error", () => done("reset"));
    req.end();
  });
}

await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
slowest.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    statuses,
    retry_after: [...retryAfter],
    seconds: +((performance.now() - started) / 1000).toFixed(1),
    slowest_s: +((slowest.at(-1) ?? 0) / 1000).toFixed(1),
  }),
);
process.exit(0);
