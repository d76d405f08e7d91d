/** The page's `html` tag: every `${value}` escaped with Bun.escapeHTML unless it is {@link Safe} (values go in double-quoted attributes or text only). */

/** Markup already safe to emit (what `html` returns). */
export class Safe {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Value = Safe | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Safe) return v.value;
  if (Array.isArray(v)) return v.map(render).join("");
  return Bun.escapeHTML(String(v));
}

/** Tagged template: literal parts are trusted, values are escaped. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Safe {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Safe(out);
}
