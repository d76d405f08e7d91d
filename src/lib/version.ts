/** The service's own version (package.json, semver; docs/releases.md), not the API contract's (OpenAPI `info.version`). */
import pkg from "../../package.json" with { type: "json" };

export const SERVICE_VERSION: string = pkg.version;
