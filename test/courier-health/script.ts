/** Scripted courier calls for the courier health tests: minutes of outcomes, then an evaluation, on the fake clock. */
import type { CallKind } from "../../src/domain/courier-health.ts";
import { evaluateHealth, type Transition } from "../../src/modules/courier-health/evaluate.ts";
import { fanOutCourierEvent } from "../../src/modules/webhooks/delivery/outbox.ts";
import type { TestContext } from "../helpers/app.ts";

const MIN = 60_000;

/** `n` minutes of `kinds` calls of `courier` counted by this process, each followed by an evaluation. */
export async function scriptMinutes(
  ctx: TestContext,
  courier: string,
  n: number,
  kinds: Partial<Record<CallKind, number>>,
  ms = 300,
): Promise<Transition[]> {
  const out: Transition[] = [];
  for (let i = 0; i < n; i++) {
    for (const [kind, count] of Object.entries(kinds) as [CallKind, number][])
      for (let k = 0; k < count; k++) ctx.deps.services.courierCalls.add(courier, kind, ms);
    await ctx.deps.services.courierCalls.flush();
    ctx.clock.advance(MIN);
    out.push(...((await evaluateHealth(ctx.tdb.db, ctx.clock.now(), fanOutCourierEvent)) ?? []));
  }
  return out;
}
