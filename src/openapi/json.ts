/** The JSON tree the document builders edit in place: the generator's output, reshaped key by key. */

// biome-ignore lint/suspicious/noExplicitAny: a generated document read and rewritten by path; typing every read (openapi-types) would be a cast per level
export type Json = Record<string, any>;
