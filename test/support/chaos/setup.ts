// Before the stream: partners (rich and thin wallets) and the packages they buy: the carrier's,
// and (options.suppliers) Airalo's and eSIM Go's for the run's destinations, synced into the
// catalog as an operator's `catalog sync` does, from the fakes the cluster runs.
import type { Supplier } from "../../../src/carrier/supplier-package.ts";
import { parseMarkupPercent, syncSupplierCatalog } from "../../../src/catalog/sync-supplier-catalog.ts";
import { loadConfig } from "../../../src/config.ts";
import { CLI_ACTOR } from "../../../src/shared/actor.ts";
import { openSupplierCatalog } from "../../../src/suppliers/supplier-catalogs.ts";
import { createPartner } from "../cluster.ts";
import { request } from "../http.ts";
import { createRng } from "../rng.ts";
import { startWebhookReceiver } from "../webhook-receiver.ts";
import {
  CHAOS_DESTINATIONS,
  CHAOS_SUPPLIER_MARKUP_PERCENT,
  type ChaosSupplier,
  RICH_CREDIT_MINOR,
  RICH_PARTNERS,
  THIN_PARTNERS,
} from "./options.ts";
import type { Run } from "./state.ts";

export async function setup(run: Run): Promise<void> {
  const url = run.cluster.liveUrls()[0]!;
  for (let i = 0; i < RICH_PARTNERS + THIN_PARTNERS; i++) {
    const thin = i >= RICH_PARTNERS;
    const name = `chaos-${thin ? "thin" : "rich"}-${i}`;
    // Thin wallets are topped up after discovery, once prices are known.
    const created = await createPartner(url, name, thin ? 0 : RICH_CREDIT_MINOR);
    run.partners.push({ name, ...created, thin, credit_minor: thin ? 0 : RICH_CREDIT_MINOR, iccids: [] });
  }
  await subscribeWebhooks(run, url);
  if (run.options.suppliers) await syncSuppliers(run);
  await discover(run, url);
  const cheapest = Math.min(...run.packages.map((p) => p.price_minor));
  for (const partner of run.partners.filter((p) => p.thin)) {
    // Room for about three purchases: then 402s, and a race between concurrent holds.
    partner.credit_minor = cheapest * 3 + 1;
    const credited = await request(url, "POST", `/admin/partners/${partner.partner_id}/wallet/credits`, {
      headers: { authorization: `Bearer ${run.cluster.env.ADMIN_TOKEN}` },
      body: { amount_minor: partner.credit_minor, reference: `seed-${partner.partner_id}` },
    });
    if (credited.status !== 201) throw new Error(`credit ${partner.name}: ${credited.status}`);
  }
  const key = run.partners[0]!.api_key;
  // Top-ups are in the stream when the service offers the route (a 400, not a 404 not_found).
  const probe = await request(url, "POST", "/v1/orders/submit-topup", { key, body: {} });
  run.stats.topups_available = !(probe.status === 404 && probe.body.code === "not_found");
  // Refunds likewise: an unknown order is 404 order_not_found where the route exists.
  const refund = await request(url, "POST", "/v1/orders/ord_chaosprobe000000000/refund", { key });
  run.stats.refunds_available = refund.status === 404 && refund.body.code === "order_not_found";
}

/**
 * Airalo's and eSIM Go's packages for the run's destinations (regional ones covering them too), as
 * `catalog sync <supplier> --destinations …` imports them, through the fakes the API processes use.
 */
async function syncSuppliers(run: Run): Promise<void> {
  if (run.cluster.suppliers === null)
    throw new Error("a run with suppliers needs a cluster that started their fakes");
  const config = loadConfig(run.cluster.env);
  for (const supplier of ["airalo", "esimgo"] as Supplier[]) {
    const opened = await openSupplierCatalog(config, run.cluster.pool, supplier, () => undefined);
    try {
      const report = await syncSupplierCatalog(run.cluster.pool, {
        supplier,
        markup_basis_points: parseMarkupPercent(CHAOS_SUPPLIER_MARKUP_PERCENT)!,
        destination_codes: [...CHAOS_DESTINATIONS],
        currency: config.currency,
        actor: CLI_ACTOR,
        list: opened.list,
      });
      run.options.log(`  catalog sync ${supplier}: ${report.added.length} packages added`);
    } finally {
      await opened.close();
    }
  }
}

/** The metered packages partners find for the run's destinations, each with its supplier. */
async function discover(run: Run, url: string): Promise<void> {
  const key = run.partners[0]!.api_key;
  const found = new Map<string, number>();
  for (const code of CHAOS_DESTINATIONS) {
    const answer = await request(url, "GET", `/v1/esim/destination/${code}/packages`, { key });
    if (answer.status !== 200) throw new Error(`discovery ${code}: ${answer.status}`);
    for (const pkg of answer.body.data as {
      package_id: string;
      data_mb: number | null;
      wholesale_price: { amount_minor: number };
    }[]) {
      if (pkg.data_mb !== null && pkg.data_mb <= 5_000)
        found.set(pkg.package_id, pkg.wholesale_price.amount_minor);
    }
  }
  // Partners never see a package's supplier: the operator's column says it.
  const rows = await run.cluster.pool.query<{ package_id: string; supplier: ChaosSupplier }>(
    "select package_id, supplier from packages where package_id = any($1::text[])",
    [[...found.keys()]],
  );
  for (const row of rows.rows) {
    if (!run.options.suppliers && row.supplier !== "carrier") continue;
    run.packages.push({
      package_id: row.package_id,
      price_minor: found.get(row.package_id)!,
      supplier: row.supplier,
    });
  }
  if (run.packages.length === 0) throw new Error("discovery found no metered packages");
  const suppliers = new Set(run.packages.map((p) => p.supplier));
  for (const supplier of run.options.suppliers ? ["carrier", "airalo", "esimgo"] : ["carrier"]) {
    if (!suppliers.has(supplier as ChaosSupplier))
      throw new Error(`discovery found no package of ${supplier}`);
  }
}

/**
 * One endpoint per partner on the run's receiver, for every event type. About one first attempt in
 * eight is answered 503, so retries (same webhook-id, 200 ms later) are part of the run.
 */
async function subscribeWebhooks(run: Run, url: string): Promise<void> {
  const receiver = await startWebhookReceiver({ autoClose: false });
  run.receiver = receiver;
  const rng = createRng(run.options.seed, "webhooks");
  const failedOnce = new Set<string>();
  for (const partner of run.partners) {
    const hook = receiver.path(partner.partner_id, (_n, received) => {
      if (failedOnce.has(received.id) || rng.int(0, 7) !== 0) return 200;
      failedOnce.add(received.id);
      return 503;
    });
    const created = await request(url, "POST", "/v1/webhook-endpoints", {
      key: partner.api_key,
      body: { url: hook },
    });
    if (created.status !== 201) throw new Error(`webhook endpoint of ${partner.name}: ${created.status}`);
    receiver.setSecrets(partner.partner_id, [created.body.secret]);
  }
}
