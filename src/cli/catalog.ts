// `catalog import <file>`: the operator's catalog file becomes the set of active packages
// (src/catalog/import-catalog.ts: valid rows upserted, absent packages retired, bad rows reported,
// one transaction). The progress bar goes to stderr, and only to a terminal, so stdout stays the
// report and a redirected or --json run is never interleaved with bar redraws.
import cliProgress from "cli-progress";
import { SUPPLIERS, type Supplier } from "../carrier/supplier-package.ts";
import { CatalogFileError, type ImportReport, importCatalogFile } from "../catalog/import-catalog.ts";
import {
  parseMarkupPercent,
  SupplierSyncError,
  type SyncReport,
  syncSupplierCatalog,
} from "../catalog/sync-supplier-catalog.ts";
import { CLI_ACTOR } from "../shared/actor.ts";
import { openSupplierCatalog, SupplierNotConfigured } from "../suppliers/supplier-catalogs.ts";
import type { CliContext, Command, CommandOutput } from "./command.ts";
import { CliError } from "./command.ts";
import { fields, table } from "./output.ts";

/** Rejected rows printed for people; --json carries every one the import listed. */
const MAX_REJECTED_SHOWN = 200;
const MAX_PATH_CHARS = 4_096;

type Progress = { onProgress?: (done: number, total: number) => void; stop: () => void };

function progressBar(enabled: boolean): Progress {
  if (!enabled) return { stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    {
      format: "importing [{bar}] {percentage}% | {value}/{total} rows",
      stream: process.stderr,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    onProgress: (done, total) => {
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(done);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

async function runImport(ctx: CliContext, file: string): Promise<ImportReport> {
  const progress = progressBar(process.stderr.isTTY === true && !ctx.json);
  try {
    return await importCatalogFile(ctx.pool, file, {
      currency: ctx.config.currency,
      actor: CLI_ACTOR,
      ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    });
  } catch (error) {
    // Problems with the file as a whole are the operator's to fix, not crashes.
    if (error instanceof CatalogFileError)
      throw new CliError("invalid_catalog_file", `${file}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "EACCES") {
      throw new CliError("file_not_readable", `${file}: cannot read the file (${code})`);
    }
    throw error;
  } finally {
    progress.stop();
  }
}

function reportText(file: string, report: ImportReport, committed: boolean): string {
  const lines = [
    committed
      ? `Catalog imported from ${file}.`
      : `Nothing imported from ${file}: no valid row, so the catalog was left as it was.`,
    fields([
      ["imported", report.imported],
      ["updated", report.updated],
      ["unchanged", report.unchanged],
      ["retired", report.retired],
      ["rejected", report.rejected_total],
      ["catalog version", report.version ?? "unchanged"],
    ]),
  ];
  if (report.rejected.length > 0) {
    const shown = report.rejected.slice(0, MAX_REJECTED_SHOWN);
    lines.push(
      "",
      "Rejected rows:",
      table(
        [{ header: "LINE", align: "right" }, { header: "ROW", align: "right" }, { header: "REASON" }],
        shown.map((r) => [r.line === undefined ? "-" : String(r.line), String(r.row), r.reason]),
      ),
    );
    const more = report.rejected_total - shown.length;
    if (more > 0) lines.push(`… and ${more} more (use --json for the first ${report.rejected.length})`);
  }
  return lines.join("\n");
}

async function importFile(ctx: CliContext, file: string): Promise<CommandOutput> {
  const report = await runImport(ctx, file);
  // importCatalog writes nothing when no row is valid: for a script that is a failed import.
  const committed = report.imported + report.updated + report.unchanged > 0;
  return {
    json: { file, committed, ...report },
    text: reportText(file, report, committed),
    exit_code: committed ? 0 : 1,
  };
}

/** `--destinations FR,DE`: upper-cased, unique, at most 300 two-letter codes. */
export function parseDestinations(text: string | undefined): string[] | null {
  if (text === undefined) return [];
  const codes = text
    .split(/[\s,]+/)
    .filter((code) => code !== "")
    .map((code) => code.toUpperCase());
  if (codes.length === 0 || codes.length > 300 || codes.some((code) => !/^[A-Z]{2}$/.test(code))) return null;
  return [...new Set(codes)].sort();
}

/** Package ids printed per list for people; --json carries every one. */
const MAX_IDS_SHOWN = 50;

function idList(title: string, ids: string[]): string[] {
  if (ids.length === 0) return [];
  const shown = ids.slice(0, MAX_IDS_SHOWN).map((id) => `  ${id}`);
  const more = ids.length - shown.length;
  return ["", `${title}:`, ...shown, ...(more > 0 ? [`  … and ${more} more (use --json)`] : [])];
}

function syncText(supplier: Supplier, report: SyncReport): string {
  return [
    `Catalog synced from ${supplier}.`,
    fields([
      ["added", report.added.length],
      ["changed", report.changed.length],
      ["removed", report.removed.length],
      ["skipped", report.skipped_total],
      ["catalog version", report.version ?? "unchanged"],
    ]),
    ...idList("Added", report.added),
    ...idList("Changed", report.changed),
    ...idList("Removed", report.removed),
    ...idList(
      "Skipped",
      report.skipped.map((s) => `${s.external_package_id}: ${s.reason}`),
    ),
  ].join("\n");
}

async function syncCatalog(
  ctx: CliContext,
  supplier: Supplier,
  markup_basis_points: number,
  destination_codes: string[],
): Promise<CommandOutput> {
  let opened: Awaited<ReturnType<typeof openSupplierCatalog>>;
  try {
    // Progress and the sandbox fake's notes go to stderr: stdout stays the report.
    opened = await openSupplierCatalog(ctx.config, ctx.pool, supplier, (m) => process.stderr.write(`${m}\n`));
  } catch (error) {
    if (error instanceof SupplierNotConfigured) throw new CliError("supplier_not_configured", error.message);
    throw error;
  }
  try {
    const report = await syncSupplierCatalog(ctx.pool, {
      supplier,
      markup_basis_points,
      destination_codes,
      currency: ctx.config.currency,
      actor: CLI_ACTOR,
      list: opened.list,
    });
    // The contract's --json shape: exactly these three lists.
    return {
      json: { added: report.added, changed: report.changed, removed: report.removed },
      text: syncText(supplier, report),
    };
  } catch (error) {
    if (error instanceof SupplierSyncError) throw new CliError("supplier_sync_refused", error.message);
    throw error;
  } finally {
    await opened.close();
  }
}

export const catalogCommands: readonly Command[] = [
  {
    group: "catalog",
    name: "import",
    args: ["<file.csv|file.json>"],
    summary: "Replace the active catalog with a CSV or JSON file; reports rejected rows by line",
    example: "npm run cli -- catalog import ./catalog-2026-11.csv",
    prepare: ({ positionals }) => {
      const file = positionals[0] ?? "";
      if (file === "" || file.length > MAX_PATH_CHARS)
        throw new CliError("invalid_argument", "give a file path");
      return (ctx) => importFile(ctx, file);
    },
  },
  {
    group: "catalog",
    name: "sync",
    args: ["<airalo|esimgo>"],
    options_usage: "--markup-percent <N> [--destinations FR,DE]",
    options: ["markup-percent", "destinations"],
    summary:
      "Import a supplier's packages at its net price plus the markup (rounded up); reports added, changed, removed",
    example: "npm run cli -- catalog sync airalo --markup-percent 15 --destinations FR,DE",
    prepare: ({ positionals, options }) => {
      const supplier = positionals[0] ?? "";
      if (!(SUPPLIERS as readonly string[]).includes(supplier))
        throw new CliError("invalid_argument", `the supplier is one of ${SUPPLIERS.join(", ")}`);
      const markup = parseMarkupPercent(options["markup-percent"] ?? "");
      if (markup === null)
        throw new CliError(
          "invalid_argument",
          "give --markup-percent N: a percentage from 0 to 1000 with at most two decimals",
        );
      const destinations = parseDestinations(options.destinations);
      if (destinations === null)
        throw new CliError("invalid_argument", "--destinations takes two-letter country codes: FR,DE");
      return (ctx) => syncCatalog(ctx, supplier as Supplier, markup, destinations);
    },
  },
];
