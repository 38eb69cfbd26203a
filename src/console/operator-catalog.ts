// Catalog import from the console (the CLI's `catalog import`, the same use case): the catalog as
// CSV or JSON text becomes the set of active packages in one transaction; the report says what
// was imported, updated, unchanged, retired and which rows were rejected and why. And the sync
// from a wholesale supplier (the CLI's `catalog sync`, the same use case): the supplier, markup and
// destinations, and the report of packages added, changed and removed. The page shows each
// supplier's active packages and last sync: the operator's alone (partners never see a supplier).

import { SUPPLIERS, type Supplier } from "../carrier/supplier-package.ts";
import { CatalogFileError, type ImportReport, importCatalogText } from "../catalog/import-catalog.ts";
import {
  parseMarkupPercent,
  SupplierSyncError,
  type SyncReport,
  supplierOverview,
  syncSupplierCatalog,
} from "../catalog/sync-supplier-catalog.ts";
import type { Pool } from "../db/pool.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { openSupplierCatalog, SupplierNotConfigured } from "../suppliers/supplier-catalogs.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page, scrollTable } from "./layout.ts";
import { CATALOG_FORM_LIMIT_BYTES, type ConsolePages } from "./pages.ts";
import { formOf } from "./request.ts";
import { operatorShell } from "./shells.ts";

const MAX_REJECTED_SHOWN = 200;
/** Package ids listed per kind of change in a sync report. */
const MAX_IDS_SHOWN = 200;
const SUPPLIER_LABELS: Record<string, string> = { carrier: "Carrier", airalo: "Airalo", esimgo: "eSIM Go" };

function syncForm(csrf: string): Html {
  return html`<form method="post" action="/console/admin/catalog/sync" class="panel">${csrfField(csrf)}
    <h2>Sync from supplier</h2>
    <label for="supplier">Supplier</label>
    <select id="supplier" name="supplier">${SUPPLIERS.map(
      (supplier) => html`<option value="${supplier}">${SUPPLIER_LABELS[supplier] ?? supplier}</option>`,
    )}</select>
    <label for="markup_percent">Markup (%)</label>
    <input id="markup_percent" name="markup_percent" inputmode="decimal" required placeholder="15" aria-describedby="sync-hint">
    <label for="destinations">Destinations (country codes, optional)</label>
    <input id="destinations" name="destinations" placeholder="FR,DE" aria-describedby="sync-hint">
    <p class="hint" id="sync-hint">Wholesale price = the supplier's net price plus the markup, rounded up to the cent.
      Packages the supplier no longer sells (or outside the destinations) are retired; other suppliers' packages are untouched.
      The sync repeats on its own with these settings.</p>
    <div class="actions"><button type="submit">Sync</button></div></form>`;
}

async function suppliersTable(pool: Pool): Promise<Html> {
  const overview = await supplierOverview(pool);
  const counts = overview.active_packages;
  const runs = new Map(overview.last_syncs.map((run) => [run.supplier, run]));
  const rows = ["carrier", ...SUPPLIERS].map((supplier) => {
    const run = runs.get(supplier as Supplier);
    return html`<tr><td>${SUPPLIER_LABELS[supplier] ?? supplier}</td><td class="num">${counts.get(supplier) ?? 0}</td>
      <td>${run ? run.last_run_at.toISOString() : ""}</td><td class="num">${run ? (run.markup_basis_points / 100).toFixed(2) : ""}</td>
      <td>${run ? run.destination_codes.join(",") || "all" : ""}</td><td>${run?.outcome ?? ""}</td></tr>`;
  });
  return scrollTable(
    "Suppliers",
    html`<table><thead><tr><th scope="col">Supplier</th><th scope="col" class="num">Active packages</th><th scope="col">Last sync</th>
      <th scope="col" class="num">Markup %</th><th scope="col">Destinations</th><th scope="col">Outcome</th></tr></thead>
      <tbody>${rows}</tbody></table>`,
  );
}

function syncReport(supplier: Supplier, r: SyncReport): Html {
  const facts: Array<[string, number | string]> = [
    ["Added", r.added.length],
    ["Changed", r.changed.length],
    ["Removed", r.removed.length],
    ["Skipped", r.skipped_total],
    ["Catalog version", r.version ?? "unchanged"],
  ];
  const lists: Array<[string, string[]]> = [
    ["Added", r.added],
    ["Changed", r.changed],
    ["Removed", r.removed],
    ["Skipped", r.skipped.map((x) => `${x.external_package_id}: ${x.reason}`)],
  ];
  return html`${notice("ok", `Synced from ${SUPPLIER_LABELS[supplier] ?? supplier}.`)}
    <section class="cards" aria-label="Sync report">${facts.map(
      ([label, value]) =>
        html`<div class="card"><p class="label">${label}</p><p class="value">${value}</p></div>`,
    )}</section>
    ${lists
      .filter(([, ids]) => ids.length > 0)
      .map(
        ([label, ids]) =>
          html`<details><summary>${label} (${ids.length})</summary><ul>${ids
            .slice(0, MAX_IDS_SHOWN)
            .map((id) => html`<li><code>${id}</code></li>`)}</ul></details>`,
      )}`;
}

type SyncInput = { supplier: Supplier; markup_basis_points: number; destination_codes: string[] };

function syncInput(form: Record<string, string | undefined>): SyncInput {
  const supplier = form.supplier ?? "";
  if (!(SUPPLIERS as readonly string[]).includes(supplier))
    throw new ApiError("invalid_request", `Choose a supplier: ${SUPPLIERS.join(", ")}.`);
  const markup_basis_points = parseMarkupPercent(form.markup_percent ?? "");
  if (markup_basis_points === null)
    throw new ApiError(
      "invalid_request",
      "The markup is a percentage from 0 to 1000 with at most two decimals.",
    );
  const codes = (form.destinations ?? "")
    .split(/[\s,]+/)
    .filter((code) => code !== "")
    .map((code) => code.toUpperCase());
  if (codes.length > 300 || codes.some((code) => !/^[A-Z]{2}$/.test(code)))
    throw new ApiError("invalid_request", "Destinations are two-letter country codes, such as FR,DE.");
  return {
    supplier: supplier as Supplier,
    markup_basis_points,
    destination_codes: [...new Set(codes)].sort(),
  };
}

function form(csrf: string): Html {
  return html`<form method="post" action="/console/admin/catalog" enctype="multipart/form-data" class="panel">${csrfField(csrf)}
    <label for="catalog_file">Catalog file (.csv with a header row, or .json)</label>
    <input id="catalog_file" name="catalog_file" type="file" accept=".csv,.json,text/csv,application/json">
    <label for="catalog">or paste it here</label>
    <textarea id="catalog" name="catalog" spellcheck="false" aria-describedby="catalog-hint"
      placeholder="package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale_minor,retail_minor,coverage,region,supplier"></textarea>
    <p class="hint" id="catalog-hint">The file becomes the carrier's catalog: its packages the file does not name are retired (never deleted); suppliers' packages are their syncs'. Optional supplier column: carrier (default), airalo or esimgo.
      Bad rows are reported and skipped; nothing is written if the file as a whole cannot be read.</p>
    <div class="actions"><button type="submit">Import</button></div></form>`;
}

function report(r: ImportReport): Html {
  const facts: Array<[string, number | string]> = [
    ["Imported (new)", r.imported],
    ["Updated", r.updated],
    ["Unchanged", r.unchanged],
    ["Retired", r.retired],
    ["Rejected", r.rejected_total],
    ["Catalog version", r.version ?? "unchanged"],
  ];
  return html`${notice(r.rejected_total === 0 ? "ok" : "error", r.rejected_total === 0 ? "Imported." : "Imported, with rejected rows.")}
    <section class="cards" aria-label="Import report">${facts.map(
      ([label, value]) =>
        html`<div class="card"><p class="label">${label}</p><p class="value">${value}</p></div>`,
    )}</section>
    ${
      r.rejected.length === 0
        ? ""
        : scrollTable(
            "Rejected rows",
            html`<table><thead><tr><th scope="col" class="num">Row</th><th scope="col" class="num">Line</th><th scope="col">Reason</th></tr></thead>
        <tbody>${r.rejected
          .slice(0, MAX_REJECTED_SHOWN)
          .map(
            (x) =>
              html`<tr><td class="num">${x.row}</td><td class="num">${x.line ?? ""}</td><td>${x.reason}</td></tr>`,
          )}</tbody></table>`,
          )
    }`;
}

async function catalogPage(pool: Pool, csrf: string, outcome: Html): Promise<Html> {
  return html`${outcome}${await suppliersTable(pool)}${syncForm(csrf)}${form(csrf)}`;
}

export const operatorCatalogPages: ConsolePages = (scope, ctx) => {
  scope.get("/catalog", async (request, reply) => {
    const shell = operatorShell(request, ctx, "/console/admin/catalog");
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Catalog", shell, await catalogPage(ctx.pool, shell.signed_in!.csrf, html``)));
  });
  scope.post("/catalog/sync", async (request, reply) => {
    const shell = operatorShell(request, ctx, "/console/admin/catalog");
    const input = syncInput(formOf(request));
    let outcome: Html;
    try {
      const opened = await openSupplierCatalog(ctx.config, ctx.pool, input.supplier, () => undefined);
      try {
        const result = await syncSupplierCatalog(ctx.pool, {
          ...input,
          currency: ctx.config.currency,
          actor: actorOf(request),
          list: opened.list,
        });
        outcome = syncReport(input.supplier, result);
      } finally {
        await opened.close();
      }
    } catch (error) {
      if (!(error instanceof SupplierSyncError || error instanceof SupplierNotConfigured)) throw error;
      reply.code(422);
      outcome = notice("error", `Nothing synced: ${error.message}`);
    }
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Catalog", shell, await catalogPage(ctx.pool, shell.signed_in!.csrf, outcome)));
  });
  scope.post("/catalog", { bodyLimit: CATALOG_FORM_LIMIT_BYTES }, async (request, reply) => {
    const shell = operatorShell(request, ctx, "/console/admin/catalog");
    let result: ImportReport;
    try {
      const form = formOf(request);
      const text = form.catalog_file ?? form.catalog;
      if (text === undefined) throw new ApiError("invalid_request", "Choose a catalog file or paste one.");
      result = await importCatalogText(ctx.pool, text, {
        currency: ctx.config.currency,
        actor: actorOf(request),
      });
    } catch (error) {
      if (error instanceof CatalogFileError)
        throw new ApiError("invalid_request", `Nothing imported: ${error.message}.`);
      throw error;
    }
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Catalog", shell, await catalogPage(ctx.pool, shell.signed_in!.csrf, report(result))));
  });
};
