// Where a wholesale supplier is reached, from the configuration (contract, "Suppliers (operator
// side)"): its API at its URL with its credentials, or, in the sandbox when its URL is unset, its
// built-in fake (src/simulators/) started in-process for as long as the caller needs it, as
// start-carrier.ts starts the carrier simulator. One start for the catalog sync (supplier-catalogs.ts,
// opened per sync) and the service's purchases (start-carrier.ts, opened for the process's life):
// both reach the same fake data (its own schema in our database), so a package the CLI synced is
// one the service's fake sells. Credentials go to the supplier only, never to a log.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { DEFAULT_AIRALO_API_URL } from "../carrier/airalo/config.ts";
import { DEFAULT_ESIMGO_API_URL } from "../carrier/esimgo/config.ts";
import type { Config, SupplierConfig } from "../config.ts";
import { startAiralo } from "../simulators/airalo/server.ts";
import { startEsimGoSimulator } from "../simulators/esimgo/server.ts";

/** The supplier cannot be reached as configured (credentials missing in production). */
export class SupplierNotConfigured extends Error {}

export type SupplierSettings = Pick<Config, "app_env"> & SupplierConfig;

export type AiraloEndpoint = {
  base_url: string;
  client_id: string;
  client_secret: string;
  /** Stops the built-in fake, if one was started. */
  close: () => Promise<void>;
};

export type EsimGoEndpoint = { base_url: string; api_key: string; close: () => Promise<void> };

/**
 * The built-in fake's own credentials: it listens on 127.0.0.1 for this process only. Fixed rather
 * than random, so the Airalo token a previous run stored (sealed under the secret) still opens.
 */
const SANDBOX_AIRALO = { client_id: "sandbox-airalo", client_secret: "sandbox-airalo-client-secret" };

const nothingToClose = async (): Promise<void> => undefined;

export async function openAiraloEndpoint(
  config: SupplierSettings,
  pool: pg.Pool,
  log: (message: string) => void,
): Promise<AiraloEndpoint> {
  if (config.airalo_api_url === null && config.app_env === "sandbox") {
    const fake = await startAiralo({ pool, port: 0, host: "127.0.0.1", ...SANDBOX_AIRALO, log });
    log(`sandbox Airalo simulation started at ${fake.url}`);
    return { base_url: `${fake.url}/v2`, ...SANDBOX_AIRALO, close: fake.close };
  }
  const { airalo_client_id: client_id, airalo_client_secret: client_secret } = config;
  if (client_id === null || client_secret === null)
    throw new SupplierNotConfigured("set AIRALO_CLIENT_ID and AIRALO_CLIENT_SECRET to buy from Airalo");
  const base_url = config.airalo_api_url ?? DEFAULT_AIRALO_API_URL;
  return { base_url, client_id, client_secret, close: nothingToClose };
}

export async function openEsimGoEndpoint(
  config: SupplierSettings,
  pool: pg.Pool,
  log: (message: string) => void,
): Promise<EsimGoEndpoint> {
  if (config.esimgo_api_url === null && config.app_env === "sandbox") {
    const api_key = randomBytes(18).toString("base64url");
    const fake = await startEsimGoSimulator({ pool, port: 0, host: "127.0.0.1", apiKey: api_key, log });
    log(`sandbox eSIM Go simulation started at ${fake.url}`);
    return { base_url: `${fake.url}/v2.4`, api_key, close: fake.close };
  }
  const api_key = config.esimgo_api_key;
  if (api_key === null) throw new SupplierNotConfigured("set ESIMGO_API_KEY to buy from eSIM Go");
  const base_url = config.esimgo_api_url ?? DEFAULT_ESIMGO_API_URL;
  return { base_url, api_key, close: nothingToClose };
}
