// Reads a catalog file (CSV or JSON) into rows to validate. Problems with the file as a whole
// (too big, not CSV, unknown column) stop the import before anything is written; problems with a
// row are the row's, and are reported by the import.
import { open } from "node:fs/promises";
import { extname } from "node:path";
import { parse } from "csv-parse/sync";
import { CATALOG_COLUMNS, OPTIONAL_CATALOG_COLUMNS } from "./catalog-rows.ts";

/** About 100,000 rows of a realistic catalog, with room to spare. */
export const MAX_CATALOG_FILE_BYTES = 20 * 1024 * 1024;
export const MAX_CATALOG_ROWS = 100_000;
/** One CSV record; a wrong delimiter or an unclosed quote fails here instead of eating the file. */
const MAX_CSV_RECORD_CHARS = 64 * 1024;

export class CatalogFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CatalogFileError";
  }
}

/** A row as found in the file: its 1-based position among the data rows, and its CSV line. */
export type SourceRow = { row: number; line?: number; data: unknown; problem?: string };

function tooManyRows(count: number): CatalogFileError {
  return new CatalogFileError(`the file has ${count} rows; at most ${MAX_CATALOG_ROWS} are accepted`);
}

async function readBounded(path: string): Promise<string> {
  const file = await open(path, "r");
  try {
    // Read one byte past the limit rather than trusting stat: the file may grow while we read.
    const buffer = Buffer.alloc(MAX_CATALOG_FILE_BYTES + 1);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_CATALOG_FILE_BYTES) {
      throw new CatalogFileError(`the file is larger than ${MAX_CATALOG_FILE_BYTES} bytes`);
    }
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await file.close();
  }
}

function csvHeader(record: string[]): string[] {
  const header = record.map((name) => name.trim().toLowerCase());
  const known: readonly string[] = CATALOG_COLUMNS;
  const unknown = header.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new CatalogFileError(`unknown columns: ${unknown.slice(0, 10).join(", ")}`);
  const missing = known.filter((name) => !header.includes(name) && !OPTIONAL_CATALOG_COLUMNS.includes(name));
  if (missing.length > 0) throw new CatalogFileError(`missing columns: ${missing.join(", ")}`);
  if (new Set(header).size !== header.length)
    throw new CatalogFileError("a column appears twice in the header");
  return header;
}

type CsvRecord = { record: string[]; info: { lines: number } };

function parseCsvRecords(text: string): CsvRecord[] {
  try {
    return parse(text, {
      bom: true,
      info: true,
      trim: true,
      skip_empty_lines: true,
      // Rows with a wrong number of fields are rejected one by one below, not fatal to the file.
      relax_column_count: true,
      max_record_size: MAX_CSV_RECORD_CHARS,
      to: MAX_CATALOG_ROWS + 2,
    }) as unknown as CsvRecord[];
  } catch (error) {
    throw new CatalogFileError(`the file is not valid CSV: ${(error as Error).message}`);
  }
}

/** CSV with a header row naming the columns (any order; coverage and region optional). */
export function parseCatalogCsv(text: string): SourceRow[] {
  const [head, ...records] = parseCsvRecords(text);
  if (!head) throw new CatalogFileError("the file is empty: a header row is required");
  if (records.length > MAX_CATALOG_ROWS) throw tooManyRows(records.length);
  const header = csvHeader(head.record);
  return records.map(({ record, info }, index) => {
    const row = index + 1;
    const data = Object.fromEntries(header.map((name, i) => [name, record[i]]));
    if (record.length !== header.length) {
      const problem = `the row has ${record.length} fields; the header has ${header.length}`;
      return { row, line: info.lines, data, problem };
    }
    return { row, line: info.lines, data };
  });
}

/** A JSON array of objects with the same fields as the CSV columns. */
export function parseCatalogJson(text: string): SourceRow[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CatalogFileError(`the file is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new CatalogFileError("a JSON catalog must be an array of objects");
  if (parsed.length > MAX_CATALOG_ROWS) throw tooManyRows(parsed.length);
  return parsed.map((data, index) => ({ row: index + 1, data }));
}

function looksLikeJson(path: string, text: string): boolean {
  const extension = extname(path).toLowerCase();
  if (extension === ".json") return true;
  if (extension === ".csv") return false;
  return text.trimStart().startsWith("[");
}

/** A catalog pasted or uploaded as text: JSON when it starts with `[`, CSV otherwise. */
export function parseCatalogText(text: string): SourceRow[] {
  if (text.length > MAX_CATALOG_FILE_BYTES) {
    throw new CatalogFileError(`the catalog is larger than ${MAX_CATALOG_FILE_BYTES} bytes`);
  }
  return looksLikeJson("", text) ? parseCatalogJson(text) : parseCatalogCsv(text);
}

/** Reads a .csv or .json file (other names: sniffed from the first character). */
export async function readCatalogFile(path: string): Promise<SourceRow[]> {
  const text = await readBounded(path);
  return looksLikeJson(path, text) ? parseCatalogJson(text) : parseCatalogCsv(text);
}
