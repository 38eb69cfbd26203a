// The compatible devices list (migration 0040): read with a search, replaced whole.

import { sql } from "kysely";
import type { Executor } from "../db/executor.ts";

export type DeviceRow = { brand: string; model: string; os: string };
export type DeviceListRow = { source: "shipped" | "import"; updated_at: Date; device_count: number };

/** `%`, `_` and `\` stand for themselves in a search, not for ILIKE's wildcards. */
function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Devices whose "brand model" contains q (any case), by brand and model in byte order (the "C"
 * collation: the same order whatever the database's locale); at most `limit`.
 */
export async function selectDevices(db: Executor, q: string | null, limit: number): Promise<DeviceRow[]> {
  const result = await sql<DeviceRow>`
    select brand, model, os from compatible_devices
    where ${q === null} or (brand || ' ' || model) ilike ${q === null ? "" : containsPattern(q)}
    order by lower(brand) collate "C", lower(model) collate "C", brand collate "C", model collate "C"
    limit ${limit}`.execute(db);
  return result.rows;
}

export async function selectDeviceList(db: Executor): Promise<DeviceListRow | null> {
  const result = await sql<DeviceListRow>`
    select source, updated_at, device_count from compatible_devices_list`.execute(db);
  return result.rows[0] ?? null;
}

/** Writers of the list take this lock for their transaction: two starts seeding at once seed once. */
export async function lockDeviceList(db: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('compatible_devices'))`.execute(db);
}

/** Makes the table exactly `devices` and records where the list came from. Run in a transaction. */
export async function replaceDevices(
  db: Executor,
  devices: readonly DeviceRow[],
  list: { source: "shipped" | "import"; updated_at: Date },
): Promise<void> {
  await sql`delete from compatible_devices`.execute(db);
  await sql`
    insert into compatible_devices (brand, model, os)
    select * from unnest(${devices.map((d) => d.brand)}::text[], ${devices.map((d) => d.model)}::text[],
                         ${devices.map((d) => d.os)}::text[])`.execute(db);
  await sql`
    insert into compatible_devices_list (singleton, source, updated_at, device_count)
    values (true, ${list.source}, ${list.updated_at}, ${devices.length})
    on conflict (singleton) do update set
      source = excluded.source, updated_at = excluded.updated_at, device_count = excluded.device_count`.execute(
    db,
  );
}
