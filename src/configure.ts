/** The configuration with the courier registry's variables (src/modules/couriers/carriers/index.ts): main.ts, the CLI and tests load it here. */
import { parseConfig, parseProcessConfig, type Config, type CourierVariables } from "./config/index.ts";
import { COURIER_BACKENDS, COURIER_ENV_PREFIXES } from "./modules/couriers/catalogue.ts";

export const COURIER_VARIABLES: CourierVariables = { prefixes: COURIER_ENV_PREFIXES, backends: COURIER_BACKENDS };

/** Parses the environment (tests pass a plain object) into a {@link Config}. @throws ConfigError naming every bad variable */
export const loadConfig = (env: Record<string, string | undefined>): Config => parseConfig(env, COURIER_VARIABLES);

/** The configuration of this process's environment (read by src/config). Only `main.ts` and the CLI call this. */
export const configFromProcess = (): Config => parseProcessConfig(COURIER_VARIABLES);
