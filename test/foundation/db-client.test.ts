/**
 * The pool of src/db/client.ts when a connection fails while it starts. postgres-js fetches the
 * server's array types as the first statement of every new connection and, unpatched, dropped that
 * promise: a fetch that failed (the connection dropped mid-start, as in a database restart, or the
 * statement cancelled) became an unhandled rejection, which ends a Bun process. The project patches it
 * (patches/README.md). A 1 ms `statement_timeout`, sent as a connection parameter, cancels the type
 * fetch of every new connection: a deterministic stand-in for the restart.
 */
import { afterEach, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { ADMIN_URL, createTestDatabase } from "../helpers/db.ts";
import { startPgRelay } from "../helpers/pg-relay.ts";

const seen: unknown[] = [];
const onUnhandled = (e: unknown) => void seen.push(e);
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

test("a connection whose type fetch fails leaves no unhandled rejection; the pool keeps answering", async () => {
  process.on("unhandledRejection", onUnhandled);
  const url = new URL(ADMIN_URL);
  url.searchParams.set("statement_timeout", "1");
  const { sql } = connect(url.toString(), { max: 1 });
  try {
    const outcomes: string[] = [];
    // Until one answers (a busy machine can hold even `select 1` past 1 ms); at most 20 tries.
    for (let i = 0; i < 20 && !outcomes.includes("ok"); i++) {
      try {
        await sql`select 1`;
        outcomes.push("ok");
      } catch (e) {
        // Each statement may itself run into the 1 ms timeout; that is an error its caller sees.
        outcomes.push(String((e as { code?: string }).code));
      }
    }
    // Unhandled rejections are reported once the microtask queue drains: one turn of the event loop, not a time.
    await new Promise((turn) => setImmediate(turn));
    expect(seen.map((e) => String((e as { code?: string })?.code ?? e))).toEqual([]);
    expect(outcomes.every((o) => o === "ok" || o === "57014")).toBe(true);
    expect(outcomes).toContain("ok");
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test("a connection a partition ended reconnects once it heals (a write cancelled by the close does not block it)", async () => {
  const tdb = await createTestDatabase({ max: 1 });
  const relay = startPgRelay(tdb.url);
  // The pool's only connection: after the answer timeout ends it, every later statement needs it to reconnect.
  const { sql } = connect(relay.url, { max: 1, deadlines: true, deadlineSeconds: 1 });
  try {
    await sql`select 1`;
    relay.blackhole();
    const cut = await sql`select 1`.then(
      () => "ok",
      (e: { code?: string }) => e.code,
    );
    expect(cut).toBe("ANSWER_TIMEOUT");
    relay.heal();
    // The first statement may still meet the closing socket (CONNECTION_CLOSED); unpatched, every one after it
    // failed with CONNECT_TIMEOUT for ever, the new socket never sent its startup message.
    const outcomes: string[] = [];
    for (let i = 0; i < 5 && !outcomes.includes("ok"); i++)
      outcomes.push(
        await sql`select 1`.then(
          () => "ok",
          (e: { code?: string }) => String(e.code),
        ),
      );
    expect(outcomes).toContain("ok");
    expect(outcomes.filter((o) => o === "CONNECT_TIMEOUT")).toEqual([]);
  } finally {
    relay.heal();
    await sql.end({ timeout: 1 });
    relay.stop();
    await tdb.drop();
  }
}, 30_000);
