/** Bounded reading of request bodies (docs/hostile-input.md#limits). */
import { Elysia } from "elysia";
import { DEFAULT_BODY_TIMEOUT_MS } from "../config/env.ts";
import { AppError } from "../lib/errors.ts";

/** Largest request body accepted, in bytes (64 KiB; 413 PAYLOAD_TOO_LARGE above). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Deepest JSON nesting accepted (`[[1]]` has depth 2); the API's bodies need 2. */
export const MAX_JSON_DEPTH = 32;

/** Thrown when a body is not acceptable JSON; rendered as the 422 `json_invalid` item. */
export class JsonInvalid extends Error {
  constructor(readonly msg: string) {
    super(msg);
    this.name = "JsonInvalid";
  }
}

export const payloadTooLarge = () =>
  new AppError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`);

let bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS;
/** Sets the process's body deadline, ms (`BODY_TIMEOUT_MS`; main.ts, once at start). */
export function setBodyTimeout(ms: number): void {
  bodyTimeoutMs = ms;
}

const requestTimeout = (ms: number) =>
  new AppError("REQUEST_TIMEOUT", `The request body did not arrive within ${ms / 1000} s; send it at once.`);

/**
 * Reads the body as a stream, at most `maxBytes`, within `timeoutMs` (default `BODY_TIMEOUT_MS`).
 * @throws AppError PAYLOAD_TOO_LARGE past `maxBytes` (the rest never read), REQUEST_TIMEOUT past `timeoutMs`
 */
export async function readBodyCapped(
  request: Request,
  maxBytes = MAX_BODY_BYTES,
  timeoutMs = bodyTimeoutMs,
): Promise<Uint8Array> {
  const stream = request.body;
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // One timer for the whole body; each read races it (a pending read on a stalled socket never settles by itself).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => (timer = setTimeout(() => resolve("expired"), timeoutMs)));
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired]);
      if (next === "expired") {
        reader.cancel().catch(() => {});
        throw requestTimeout(timeoutMs);
      }
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        reader.cancel().catch(() => {});
        throw payloadTooLarge();
      }
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  const [first] = chunks;
  if (chunks.length === 1 && first) return first;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  OPEN_ARRAY = 0x5b,
  OPEN_OBJECT = 0x7b,
  CLOSE_ARRAY = 0x5d,
  CLOSE_OBJECT = 0x7d;

/**
 * True when the JSON in `bytes` nests deeper than `maxDepth`: one pass, no allocation, brackets inside strings
 * ignored (safe on UTF-8: no multi-byte sequence contains an ASCII bracket, quote or backslash).
 */
export function jsonDepthExceeds(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses a JSON request body within the limits above; an empty body is `undefined` (the schema decides).
 * @throws AppError PAYLOAD_TOO_LARGE over {@link MAX_BODY_BYTES}
 * @throws JsonInvalid for bytes that are not UTF-8, nesting over {@link MAX_JSON_DEPTH}, or invalid JSON
 */
async function parseJsonBody(request: Request): Promise<unknown> {
  const bytes = await readBodyCapped(request);
  if (jsonDepthExceeds(bytes)) throw new JsonInvalid(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new JsonInvalid("Invalid JSON: the body is not UTF-8");
  }
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new JsonInvalid("Invalid JSON");
  }
}

/** The `/v1` JSON body parser, scoped; unnamed, since Elysia skips a named plugin used twice. */
export function jsonBodies() {
  return new Elysia().onParse({ as: "scoped" }, ({ request }) => parseJsonBody(request));
}
