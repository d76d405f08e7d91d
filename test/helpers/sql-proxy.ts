/** Observing the statements code sends through a postgres-js `sql`, transactions included. */
import type postgres from "postgres";

/**
 * `sql` whose tagged-template statements go through `onStatement` (`send` runs the statement and returns its
 * pending answer; `strings` are the template's parts), also on the transaction `sql.begin` hands its callback.
 */
export function proxyStatements(
  sql: postgres.Sql,
  onStatement: (send: () => unknown, strings: TemplateStringsArray, values: unknown[]) => unknown,
): postgres.Sql {
  const wrap = (target: postgres.Sql): postgres.Sql =>
    new Proxy(target, {
      apply(t, self, args: [TemplateStringsArray, ...unknown[]]) {
        return onStatement(() => Reflect.apply(t, self, args), args[0], args.slice(1));
      },
      get(t, prop, receiver) {
        if (prop !== "begin") return Reflect.get(t, prop, receiver);
        return (...a: unknown[]) => {
          const cb = a.pop() as (tx: postgres.Sql) => unknown;
          return (t.begin as (...x: unknown[]) => unknown)(...a, (tx: postgres.Sql) => cb(wrap(tx)));
        };
      },
    });
  return wrap(sql);
}
