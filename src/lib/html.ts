/**
 * Safe-by-default HTML: the `html` tagged template escapes every value unless it is {@link SafeHtml}; arrays are
 * joined, `null`/`undefined`/`false` render nothing. Why not JSX: docs/dashboard.md#decisions ("Rendering").
 */

/** Markup that is already safe to emit (the result of `html`). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESC: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESC[c] ?? c);
}

export type Renderable = SafeHtml | string | number | boolean | null | undefined | readonly Renderable[];

function render(v: Renderable): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join("");
  return escapeHtml(String(v));
}

/** Tagged template: literal parts are trusted, every `${value}` is escaped. */
export function html(strings: TemplateStringsArray, ...values: Renderable[]): SafeHtml {
  // A template has one more string than values.
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}
