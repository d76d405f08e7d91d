/**
 * The demo limit counts one client once, however its address is spelt (http/client-ip.ts): behind a trusted
 * proxy, `IP`, `IP:port` and `::ffff:IP` are one client, and an IPv6 /64 is one client. The addresses are data
 * in X-Forwarded-For (documentation ranges, RFC 5737 and RFC 3849), never dialled; requests go to the app in
 * process. Requests without a query are enough: the limit is counted before validation (422 under it, 429 over).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEMO_LIMIT_PER_HOUR } from "../../src/domain/limits.ts";
import { testContext, type TestContext } from "../helpers/app.ts";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await testContext({ TRUST_PROXY: "1" });
});
afterAll(() => ctx.close());

const demo = async (forwardedFor: string) =>
  (await ctx.call("/demo/track", { headers: { "x-forwarded-for": forwardedFor, "x-forwarded-proto": "https" } }))[0]
    .status;

test("IPv4 written bare, with a port, and IPv4-mapped counts as one client", async () => {
  const spellings = [
    "203.0.113.9",
    "203.0.113.9:4711",
    "::ffff:203.0.113.9",
    "[::ffff:203.0.113.9]:443",
    "::FFFF:CB00:7109",
  ];
  const statuses = [];
  for (let i = 0; i < DEMO_LIMIT_PER_HOUR + 2; i++) statuses.push(await demo(spellings[i % spellings.length]!));
  expect(statuses).toEqual([...Array(DEMO_LIMIT_PER_HOUR).fill(422), 429, 429]);
  expect(await demo("203.0.113.10")).toBe(422); // the neighbour has its own allowance
});

test("every address of one IPv6 /64 shares one allowance; the next /64 has its own", async () => {
  const statuses = [];
  for (let i = 1; i <= 30; i++) statuses.push(await demo(`2001:db8:aa:1:${i.toString(16)}::${i}`));
  expect(statuses.filter((s) => s === 422)).toHaveLength(DEMO_LIMIT_PER_HOUR);
  expect(statuses.filter((s) => s === 429)).toHaveLength(30 - DEMO_LIMIT_PER_HOUR);
  expect(await demo("[2001:db8:aa:1::ffff]:8080")).toBe(429);
  expect(await demo("2001:db8:aa:2::1")).toBe(422);
});
