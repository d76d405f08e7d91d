/** `GET /postman`: the Postman v2.1 collection (spec: Other), built on the first request and cached. */
import { Elysia, type AnyElysia } from "elysia";
import type { AppDeps } from "../../deps.ts";
import { sandboxEcho } from "./echo.ts";
import type { Json } from "./scripts.ts";
import { convertOpenApi, finishCollection } from "./service.ts";

const POSTMAN_FILENAME = "courier-tracking-api.postman_collection.json";

/** The finished OpenAPI document of `app`, passed in by the composition so no module imports the document. */
export type DocumentOf = (app: AnyElysia) => Json;

export function postmanModule(deps: Pick<AppDeps, "config">, documentOf: DocumentOf) {
  const self = new Elysia({ name: "postman" });
  let built: Promise<string> | undefined;
  const build = async () => {
    const doc = documentOf(self);
    return JSON.stringify(
      finishCollection(await convertOpenApi(doc), doc, deps.config.publicBaseUrl, sandboxEcho(deps.config)?.url),
      null,
      2,
    );
  };
  return self.get(
    "/postman",
    async () => {
      // A failed build is not cached: the next request tries again.
      built ??= build().catch((err: unknown) => {
        built = undefined;
        throw err;
      });
      return new Response(await built, {
        headers: {
          "content-type": "application/json; charset=utf-8",
          "content-disposition": `attachment; filename="${POSTMAN_FILENAME}"`,
          "cache-control": "public, max-age=300",
        },
      });
    },
    { detail: { hide: true } },
  );
}
