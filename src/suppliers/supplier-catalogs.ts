// A supplier's catalogue reader, from the configuration (contract, "Suppliers (operator side)"):
// the supplier reached as supplier-endpoints.ts says (its API with its credentials, or in the
// sandbox its built-in fake started in-process). The CLI and the console open one per sync and
// close it after; the periodic sync likewise. In production a supplier without its credentials is
// not configured: the sync refuses, saying which settings are missing.
import type pg from "pg";
import { listAiraloPackages } from "../carrier/airalo/list-packages.ts";
import { listEsimGoCatalogue } from "../carrier/esimgo/list-catalogue.ts";
import type { Supplier, SupplierListing } from "../carrier/supplier-package.ts";
import {
  openAiraloEndpoint,
  openEsimGoEndpoint,
  SupplierNotConfigured,
  type SupplierSettings,
} from "./supplier-endpoints.ts";

export { SupplierNotConfigured };

export type OpenedCatalog = { list: () => Promise<SupplierListing>; close: () => Promise<void> };

export async function openSupplierCatalog(
  config: SupplierSettings,
  pool: pg.Pool,
  supplier: Supplier,
  log: (message: string) => void,
): Promise<OpenedCatalog> {
  const timeout_ms = config.supplier_timeout_ms;
  if (supplier === "airalo") {
    const { close, ...airalo } = await openAiraloEndpoint(config, pool, log);
    return { list: () => listAiraloPackages({ pool, timeout_ms, ...airalo }), close };
  }
  const { close, ...esimgo } = await openEsimGoEndpoint(config, pool, log);
  return { list: () => listEsimGoCatalogue({ timeout_ms, ...esimgo }), close };
}
