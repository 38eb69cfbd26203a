// Operator use case: one partner's orders with the partner's own filters (the support search), for
// the operator API and the operator console. The same page and cursor as the partner's list.
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { findPartner } from "../partners/list-partners.ts";
import { ApiError } from "../shared/errors.ts";
import { listOrders, type OrderListFilters, type OrderPage } from "./list-orders.ts";

export async function listPartnerOrders(
  db: Kysely<Database>,
  input: OrderListFilters & { partner_id: string; limit: number; cursor: string | null },
): Promise<OrderPage> {
  // Asked first: an unknown partner is 404, not an empty page that reads as "no such order".
  if (!(await findPartner(db, input.partner_id)))
    throw new ApiError("partner_not_found", `No partner ${input.partner_id}.`);
  return listOrders(db, input);
}
