// The eSIM-capable devices partners show their travellers (contract, "Catalog additions"): a list
// shipped with the service (shipped-devices.ts) that seeds the database, searchable by brand or
// model, and replaced whole by the operator's import (`npm run cli -- devices import FILE`).
import { readFile, stat } from "node:fs/promises";
import { extname } from "node:path";
import { parse } from "csv-parse/sync";
import type { Kysely } from "kysely";
import { type Static, Type } from "typebox";
import { recordAudit } from "../audit/record-audit.ts";
import type { Database } from "../db/schema.ts";
import type { Actor } from "../shared/actor.ts";
import {
  type DeviceRow,
  lockDeviceList,
  replaceDevices,
  selectDeviceList,
  selectDevices,
} from "./compatible-devices.sql.ts";
import { SHIPPED_DEVICES, SHIPPED_DEVICES_UPDATED_AT } from "./shipped-devices.ts";

export type CompatibleDevice = DeviceRow;

/** Devices in one list: the shipped one has a few hundred; migration 0040 checks the same bound. */
export const MAX_DEVICES = 5_000;
/** 5,000 rows of about 60 bytes, with room for quoting. */
export const MAX_DEVICES_FILE_BYTES = 1024 * 1024;
/** At most, and without a `limit`: the whole list (the contract's answer), as an import holds at most MAX_DEVICES. */
export const MAX_DEVICES_LIMIT = MAX_DEVICES;
export const DEFAULT_DEVICES_LIMIT = MAX_DEVICES_LIMIT;
export const MAX_DEVICE_QUERY_CHARS = 64;
/** Problems listed when a file is refused; the count says how many there were. */
const MAX_PROBLEMS_LISTED = 50;
const FIELD_CHARS = { brand: 64, model: 128, os: 32 } as const;
const CONTROL_CHARACTERS = /\p{Cc}/u;

export const CompatibleDeviceSchema = Type.Object(
  {
    brand: Type.String({ description: "The maker, such as `Apple` or `Samsung`." }),
    model: Type.String({ description: "The model as its maker names it, such as `iPhone 15 Pro`." }),
    os: Type.String({ description: "`iOS`, `iPadOS`, `watchOS`, `Android`, `Wear OS`, `Windows`…" }),
  },
  { additionalProperties: false },
);

export const CompatibleDevicesResponse = Type.Object(
  {
    data: Type.Array(CompatibleDeviceSchema, { description: "By brand, then model." }),
    updated_at: Type.String({
      format: "date-time",
      description: "When the list was last replaced: the shipped list's date, or the operator's import.",
    }),
  },
  { additionalProperties: false },
);
export type CompatibleDevices = Static<typeof CompatibleDevicesResponse>;

export type DevicesQuery = { q: string | null; limit: number };

function byBrandAndModel(a: DeviceRow, b: DeviceRow): number {
  const key = (d: DeviceRow) => `${d.brand.toLowerCase()}\u0000${d.model.toLowerCase()}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/** The shipped list searched in memory, for a database never seeded (the same rules as the SQL). */
function searchShipped(query: DevicesQuery): DeviceRow[] {
  const q = query.q?.toLowerCase() ?? null;
  return SHIPPED_DEVICES.filter((d) => q === null || `${d.brand} ${d.model}`.toLowerCase().includes(q))
    .sort(byBrandAndModel)
    .slice(0, query.limit);
}

export async function listCompatibleDevices(
  db: Kysely<Database>,
  query: DevicesQuery,
): Promise<CompatibleDevices> {
  const list = await selectDeviceList(db);
  // Every start seeds the table (main.ts); until one has, the service's own list is the answer.
  if (list === null) return { data: searchShipped(query), updated_at: SHIPPED_DEVICES_UPDATED_AT };
  return { data: await selectDevices(db, query.q, query.limit), updated_at: list.updated_at.toISOString() };
}

export type SeedDevicesOutcome = "seeded" | "refreshed" | "kept";

/**
 * Writes the shipped list when the database has none, or refreshes it when it is an older shipped
 * list (a new release); never replaces the operator's import.
 */
export async function seedCompatibleDevices(db: Kysely<Database>): Promise<SeedDevicesOutcome> {
  const shipped_at = new Date(SHIPPED_DEVICES_UPDATED_AT);
  return db.transaction().execute(async (trx) => {
    await lockDeviceList(trx);
    const list = await selectDeviceList(trx);
    if (list !== null && (list.source === "import" || list.updated_at >= shipped_at)) return "kept";
    await replaceDevices(trx, SHIPPED_DEVICES, { source: "shipped", updated_at: shipped_at });
    return list === null ? "seeded" : "refreshed";
  });
}

/** A devices file refused as a whole: nothing was written. */
export class DevicesFileError extends Error {
  readonly problems: string[];
  constructor(message: string, problems: string[] = []) {
    super(problems.length === 0 ? message : `${message}: ${problems.join("; ")}`);
    this.name = "DevicesFileError";
    this.problems = problems;
  }
}

function parseRows(path: string, text: string): unknown[] {
  const json = extname(path).toLowerCase() === ".json" || text.trimStart().startsWith("[");
  try {
    if (json) {
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed))
        throw new DevicesFileError("a JSON devices file must be an array of objects");
      return parsed;
    }
    const records = parse(text, {
      bom: true,
      trim: true,
      skip_empty_lines: true,
      columns: false,
    }) as string[][];
    const [head, ...rest] = records;
    const header = (head ?? []).map((name) => name.toLowerCase());
    if (header.join(",") !== "brand,model,os")
      throw new DevicesFileError("a CSV devices file starts with the header brand,model,os");
    return rest.map((record) => Object.fromEntries(header.map((name, i) => [name, record[i]])));
  } catch (error) {
    if (error instanceof DevicesFileError) throw error;
    throw new DevicesFileError(`the file is not valid ${json ? "JSON" : "CSV"}: ${(error as Error).message}`);
  }
}

function checkField(
  row: Record<string, unknown>,
  field: keyof typeof FIELD_CHARS,
  problems: string[],
): string {
  const value = typeof row[field] === "string" ? (row[field] as string).trim() : "";
  if (value === "") problems.push(`${field} is missing`);
  else if (value.length > FIELD_CHARS[field])
    problems.push(`${field} is longer than ${FIELD_CHARS[field]} characters`);
  else if (CONTROL_CHARACTERS.test(value)) problems.push(`${field} contains control characters`);
  return value;
}

/** Every row checked: the list is taken whole or not at all. */
export function checkDevices(rows: unknown[]): DeviceRow[] {
  if (rows.length === 0)
    throw new DevicesFileError("the file lists no device; an empty list would hide them all");
  if (rows.length > MAX_DEVICES) throw new DevicesFileError(`${rows.length} devices; at most ${MAX_DEVICES}`);
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const devices = rows.map((data, index) => {
    const row = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
    const own: string[] = [];
    const device = {
      brand: checkField(row, "brand", own),
      model: checkField(row, "model", own),
      os: checkField(row, "os", own),
    };
    const key = `${device.brand.toLowerCase()}\u0000${device.model.toLowerCase()}`;
    const first = seen.get(key);
    if (own.length === 0 && first !== undefined) own.push(`repeats row ${first}`);
    seen.set(key, first ?? index + 1);
    for (const problem of own) problems.push(`row ${index + 1}: ${problem}`);
    return device;
  });
  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_PROBLEMS_LISTED);
    if (problems.length > listed.length) listed.push(`… and ${problems.length - listed.length} more`);
    throw new DevicesFileError(`${problems.length} problems, nothing imported`, listed);
  }
  return devices;
}

/** Reads, checks and writes a devices file (CSV brand,model,os or a JSON array) in one transaction. */
export async function importCompatibleDevices(
  db: Kysely<Database>,
  path: string,
  actor: Actor,
): Promise<{ device_count: number; updated_at: string }> {
  const size = (await stat(path)).size;
  if (size > MAX_DEVICES_FILE_BYTES)
    throw new DevicesFileError(`the file is larger than ${MAX_DEVICES_FILE_BYTES} bytes`);
  const devices = checkDevices(parseRows(path, await readFile(path, "utf8")));
  const updated_at = new Date();
  await db.transaction().execute(async (trx) => {
    await lockDeviceList(trx);
    await replaceDevices(trx, devices, { source: "import", updated_at });
    await recordAudit(trx, {
      actor,
      action: "compatible_devices.imported",
      partner_id: null,
      target: { type: "compatible_devices", id: null },
      details: { device_count: devices.length },
    });
  });
  return { device_count: devices.length, updated_at: updated_at.toISOString() };
}
