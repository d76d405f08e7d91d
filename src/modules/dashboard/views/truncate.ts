/**
 * Long values shown in one line that shortens in the middle, the tail kept; the whole value stays in the text and
 * `title` (docs/dashboard.md, "Narrow screens").
 */
import { html, type SafeHtml } from "../html.ts";

/** How many trailing characters always stay visible. */
const TAIL = 14;

/** `value` as a middle-truncating span; values up to `TAIL` characters long are not split. */
export function midTrunc(value: string, tail = TAIL): SafeHtml {
  if (value.length <= tail) return html`<span class="mid" title="${value}"><span class="mid-b">${value}</span></span>`;
  return html`<span class="mid" title="${value}"><span class="mid-a">${value.slice(0, -tail)}</span><span class="mid-b">${value.slice(-tail)}</span></span>`;
}
