/** SQL fragments for statements built from parts (the claim engine's): one tagged-template call per statement. */
import type postgres from "postgres";

/** SQL text and parameters, sent as ONE tagged-template call by {@link run} (wrappers see the whole statement). */
export interface Fragment {
  readonly strings: readonly string[];
  readonly values: readonly unknown[];
}

const isFragment = (v: unknown): v is Fragment =>
  typeof v === "object" && v !== null && "strings" in v && "values" in v && !Array.isArray(v);

/**
 * A fragment from a template; a value that is itself a {@link Fragment} is spliced in, any other is a parameter.
 * A template (and a fragment) has one more string than values, so the `?? ""` below never applies.
 */
export function frag(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): Fragment {
  const out = [strings[0] ?? ""];
  const vals: unknown[] = [];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (isFragment(v)) {
      out[out.length - 1] += v.strings[0] ?? "";
      for (let j = 0; j < v.values.length; j++) {
        vals.push(v.values[j]);
        out.push(v.strings[j + 1] ?? "");
      }
    } else {
      vals.push(v);
      out.push("");
    }
    out[out.length - 1] += strings[i + 1] ?? "";
  }
  return { strings: out, values: vals };
}

/** Text spliced in as it is: code constants only (table and column names, fixed expressions), never input. */
export const raw = (text: string): Fragment => ({ strings: [text], values: [] });

/** Runs `f` as one statement on `sql`. */
export function run<T extends readonly object[] = postgres.Row[]>(
  sql: postgres.Sql,
  f: Fragment,
): postgres.PendingQuery<T & postgres.Row[]> {
  const strings = Object.assign([...f.strings], { raw: [...f.strings] }) as unknown as TemplateStringsArray;
  return sql(strings, ...(f.values as postgres.ParameterOrFragment<never>[])) as unknown as postgres.PendingQuery<
    T & postgres.Row[]
  >;
}
