/** The webhook form's custom header rows to the API's `headers` (docs/dashboard.md): an empty value keeps the stored one. */
import { customHeaderProblems } from "../../webhooks/headers.ts";
import type { FormBody } from "../http.ts";
import type { HeaderRow } from "../views/webhook-tools.ts";

export interface HeadersFromForm {
  headers: Record<string, string>;
  /** The names as typed, with the masked stored value where one is kept (for a form shown again). */
  rows: HeaderRow[];
  error?: string;
}

/**
 * Reads `header_name[i]` / `header_value[i]` against the `stored` raw headers and their `masked` view; a nameless row
 * is ignored, a nameless value, a new name without value, a repeated or reserved name is an error.
 */
export function headersFromForm(
  form: FormBody,
  stored: Record<string, string> = {},
  masked: Record<string, string> = {},
): HeadersFromForm {
  const names = form.header_name ?? [];
  const values = form.header_value ?? [];
  const headers: Record<string, string> = {};
  const rows: HeaderRow[] = [];
  const seen = new Set<string>();
  let error: string | undefined;
  for (let i = 0; i < Math.max(names.length, values.length); i++) {
    const name = (names[i] ?? "").trim();
    const value = (values[i] ?? "").trim();
    if (!name) {
      if (value) error ??= "Enter a name for each header value.";
      continue;
    }
    rows.push({ name, masked: masked[name] });
    if (seen.has(name.toLowerCase())) error ??= `Header ${name} is given twice (names are case-insensitive).`;
    seen.add(name.toLowerCase());
    const v = value || stored[name];
    if (v === undefined) error ??= `Enter a value for ${name}.`;
    else headers[name] = v;
  }
  error ??= customHeaderProblems({ headers })[0]?.msg;
  return { headers, rows, error };
}
