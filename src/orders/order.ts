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

/** An eSIM an order made: a purchases row. */
export type CompletedPurchase = PurchaseRow & { status: "completed" };

/** A line of a group order the carrier refused for good (order_lines): never charged, no eSIM. */
export type FailedPurchase = Pick<PurchaseRow, "order_id" | "position" | "package_id" | "start_date"> & {
  status: "failed";
};

/** An entry of `Order.purchases`, in position order. */
export type OrderPurchase = CompletedPurchase | FailedPurchase;

/** What renders as an entry of `Order.purchases`: a purchases row is an eSIM made. */
export type PurchaseEntry = PurchaseRow | OrderPurchase;

/** A line of a group order (migration 0047): one eSIM, provisioned and final on its own. */
export type OrderLine = Selectable<Database["order_lines"]>;

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
