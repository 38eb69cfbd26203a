// Catalog import from the console (the CLI's `catalog import`, the same use case): the catalog as
// CSV or JSON text becomes the set of active packages in one transaction; the report says what
// was imported, updated, unchanged, retired and which rows were rejected and why.
import { CatalogFileError, type ImportReport, importCatalogText } from "../catalog/import-catalog.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page, scrollTable } from "./layout.ts";
import { CATALOG_FORM_LIMIT_BYTES, type ConsolePages } from "./pages.ts";
import { formOf } from "./request.ts";
import { operatorShell } from "./shells.ts";

const MAX_REJECTED_SHOWN = 200;

function form(csrf: string): Html {
  return html`<form method="post" action="/console/admin/catalog" enctype="multipart/form-data" class="panel">${csrfField(csrf)}
    <label for="catalog_file">Catalog file (.csv with a header row, or .json)</label>
    <input id="catalog_file" name="catalog_file" type="file" accept=".csv,.json,text/csv,application/json">
    <label for="catalog">or paste it here</label>
    <textarea id="catalog" name="catalog" spellcheck="false" aria-describedby="catalog-hint"
      placeholder="package_id,external_package_id,name,destination_codes,data_mb,validity_days,wholesale_minor,retail_minor,coverage,region"></textarea>
    <p class="hint" id="catalog-hint">The file becomes the whole catalog: packages it does not name are retired (never deleted).
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

export const operatorCatalogPages: ConsolePages = (scope, ctx) => {
  scope.get("/catalog", async (request, reply) => {
    const shell = operatorShell(request, ctx, "/console/admin/catalog");
    return reply
      .type("text/html; charset=utf-8")
      .send(page("Catalog import", shell, form(shell.signed_in!.csrf)));
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
      .send(page("Catalog import", shell, html`${report(result)}${form(shell.signed_in!.csrf)}`));
  });
};
