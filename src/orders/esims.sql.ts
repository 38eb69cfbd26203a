// SQL of provisioned eSIMs: the profile a top-up order is completed with, and the one a
// top-up's ICCID must name (partner-esim.ts).
import { type Selectable, sql } from "kysely";
import type { Executor } from "../db/executor.ts";
import type { Database, PackageSupplier } from "../db/schema.ts";

/**
 * Exactly the columns esimProfile reads, and of the order that made the eSIM: its supplier, and
 * whether a refund of it is under way (`refund_requested_at`).
 */
export type EsimRow = Pick<
  Selectable<Database["esims"]>,
  "iccid" | "partner_id" | "order_id" | "package_id" | "smdp_address" | "activation_code" | "status"
> & { supplier: PackageSupplier; refund_under_way: boolean };

export async function esimProfile(db: Executor, iccid: string): Promise<EsimRow | null> {
  const result = await sql<EsimRow>`
    select e.iccid, e.partner_id, e.order_id, e.package_id, e.smdp_address, e.activation_code, e.status,
           o.supplier, o.refund_requested_at is not null as refund_under_way
    from esims e join orders o on o.order_id = e.order_id
    where e.iccid = ${iccid}`.execute(db);
  return result.rows[0] ?? null;
}
