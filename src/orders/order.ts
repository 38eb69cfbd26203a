// The order as the rest of the service sees it: the row types of src/db/schema.ts, so the two
// cannot drift. The SQL that reads and writes them is orders.sql.ts, private to this folder.
import type { Selectable } from "kysely";
import type { Database } from "../db/schema.ts";

/** An order as read from the database. */
export type OrderRow = Omit<
  Selectable<Database["orders"]>,
  | "next_resolve_at"
  | "resolve_attempts"
  | "carrier_check_after"
  | "carrier_check"
  | "carrier_check_attempts"
  // `iccid` of a top-up, kept for its index (migration 0046); the rest of the service reads `iccid`.
  | "topup_iccid"
>;

export type PurchaseRow = Selectable<Database["purchases"]>;

/** What the caller of createPendingOrderAhead decides; the rest is the order's state. */
export type NewOrder = Omit<
  OrderRow,
  | "seq"
  | "status"
  | "failure_code"
  | "failure_detail"
  | "carrier_refusal"
  | "created_at"
  | "resolved_at"
  | "refunded_at"
  | "refund_requested_at"
  | "lease_until"
  | "lease_token"
  | "lease_holder"
>;
