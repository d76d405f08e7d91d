/** Bodies registered once as Elysia models (docs/architecture.md, "Schemas"); names are global. */
import type { TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";

const registered = new Map<string, TSchema>();

/**
 * A named plugin (`pluginName`, so using it twice adds nothing) that registers `models` (model name → schema).
 * @throws Error when a name is already registered with another schema
 */
export function schemaModels<const M extends Record<string, TSchema>>(pluginName: string, models: M) {
  for (const [name, schema] of Object.entries(models)) {
    const prior = registered.get(name);
    if (prior && prior !== schema) throw new Error(`model ${name} is registered twice, with different schemas`);
    registered.set(name, schema);
  }
  return new Elysia({ name: pluginName }).model(models);
}

/** The schema registered under the model name `name` by {@link schemaModels}, or undefined. */
export function modelSchema(name: string): TSchema | undefined {
  return registered.get(name);
}
