// A supplier's catalogue reader, from the configuration (contract, "Suppliers (operator side)"):
// the supplier's API at its URL with its credentials, or, in the sandbox when its URL is unset, its
// built-in fake (src/simulators/) started in-process for as long as the caller needs it, as
// start-carrier.ts starts the carrier simulator. The CLI and the console open one per sync and
// close it after; the periodic sync likewise. Credentials go to the supplier only, never to a log.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { DEFAULT_AIRALO_API_URL } from "../carrier/airalo/config.ts";
import { listAiraloPackages } from "../carrier/airalo/list-packages.ts";
import { DEFAULT_ESIMGO_API_URL } from "../carrier/esimgo/config.ts";
import { listEsimGoCatalogue } from "../carrier/esimgo/list-catalogue.ts";
import type { Supplier, SupplierListing } from "../carrier/supplier-package.ts";
import type { Config, SupplierConfig } from "../config.ts";
import { startAiralo } from "../simulators/airalo/server.ts";
import { startEsimGoSimulator } from "../simulators/esimgo/server.ts";

export type OpenedCatalog = { list: () => Promise<SupplierListing>; close: () => Promise<void> };

/** The supplier cannot be reached as configured (credentials missing in production). */
export class SupplierNotConfigured extends Error {}

type Settings = Pick<Config, "app_env"> & SupplierConfig;

/**
 * The built-in fake's own credentials: it listens on 127.0.0.1 for this process only. Fixed rather
 * than random, so the Airalo token a previous run stored (sealed under the secret) still opens.
 */
const SANDBOX_AIRALO = { client_id: "sandbox-airalo", client_secret: "sandbox-airalo-client-secret" };

export async function openSupplierCatalog(
  config: Settings,
  pool: pg.Pool,
  supplier: Supplier,
  log: (message: string) => void,
): Promise<OpenedCatalog> {
  // Purchases, top-ups and refunds of a supplier's package still go to the carrier: until they are
  // routed to the package's supplier, a synced package could be sold but not delivered. So the
  // sync runs in the sandbox only, where it is tried out against the built-in fakes.
  if (config.app_env === "production") throw new SupplierNotConfigured(SYNC_NOT_IN_PRODUCTION);
  return supplier === "airalo" ? openAiralo(config, pool, log) : openEsimGo(config, pool, log);
}

export const SYNC_NOT_IN_PRODUCTION =
  "catalog sync runs in the sandbox only in this release: purchases of a supplier's packages are not yet routed to that supplier";

async function openAiralo(config: Settings, pool: pg.Pool, log: (m: string) => void): Promise<OpenedCatalog> {
  const timeout_ms = config.supplier_timeout_ms;
  if (config.airalo_api_url === null && config.app_env === "sandbox") {
    const fake = await startAiralo({ pool, port: 0, host: "127.0.0.1", ...SANDBOX_AIRALO, log });
    log(`sandbox Airalo simulation started at ${fake.url}`);
    const base_url = `${fake.url}/v2`;
    return {
      list: () => listAiraloPackages({ pool, base_url, timeout_ms, ...SANDBOX_AIRALO }),
      close: fake.close,
    };
  }
  const { airalo_client_id: client_id, airalo_client_secret: client_secret } = config;
  if (client_id === null || client_secret === null)
    throw new SupplierNotConfigured("set AIRALO_CLIENT_ID and AIRALO_CLIENT_SECRET to sync from Airalo");
  const base_url = config.airalo_api_url ?? DEFAULT_AIRALO_API_URL;
  return {
    list: () => listAiraloPackages({ pool, base_url, timeout_ms, client_id, client_secret }),
    close: async () => undefined,
  };
}

async function openEsimGo(config: Settings, pool: pg.Pool, log: (m: string) => void): Promise<OpenedCatalog> {
  const timeout_ms = config.supplier_timeout_ms;
  if (config.esimgo_api_url === null && config.app_env === "sandbox") {
    const api_key = randomBytes(18).toString("base64url");
    const fake = await startEsimGoSimulator({ pool, port: 0, host: "127.0.0.1", apiKey: api_key, log });
    log(`sandbox eSIM Go simulation started at ${fake.url}`);
    const base_url = `${fake.url}/v2.4`;
    return { list: () => listEsimGoCatalogue({ base_url, api_key, timeout_ms }), close: fake.close };
  }
  const api_key = config.esimgo_api_key;
  if (api_key === null) throw new SupplierNotConfigured("set ESIMGO_API_KEY to sync from eSIM Go");
  const base_url = config.esimgo_api_url ?? DEFAULT_ESIMGO_API_URL;
  return { list: () => listEsimGoCatalogue({ base_url, api_key, timeout_ms }), close: async () => undefined };
}
