// `orders pending|settle`: the orders whose outcome the carrier never gave, and the operator's
// way to finish them (src/orders/settle-pending-order.ts decides what the carrier allows);
// `orders show`: one order, with its refund if one was asked for.
import { listPendingOrders } from "../orders/order-totals.ts";
import { orderOf } from "../orders/refunded-order.ts";
import { type Settlement, SettlementRefused, settlePendingOrder } from "../orders/settle-pending-order.ts";
import { refundStatus } from "../refunds/refund-status.ts";
import { ORDER_ID } from "../shared/ids.ts";
import { orderFinishers } from "../topups/order-finishers.ts";
import { limit } from "./args.ts";
import { withCarrier, withCarrierContext } from "./carrier.ts";
import { type CliContext, CliError, type Command, type CommandArgs, type CommandOutput } from "./command.ts";
import { fields, table, timestamp } from "./output.ts";

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;

function age(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  return hours >= 1
    ? `${hours}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")}m`
    : `${Math.floor(seconds / 60)}m`;
}

async function pending(ctx: CliContext, max: number): Promise<CommandOutput> {
  const give_up_hours = ctx.config.pending_give_up_hours;
  const rows = await listPendingOrders(ctx.db, give_up_hours, max);
  const data = rows.map((row) => ({
    ...row,
    age_seconds: Math.floor(row.age_seconds),
    created_at: timestamp(row.created_at),
    lease_until: timestamp(row.lease_until),
  }));
  const text =
    data.length === 0
      ? "No pending orders."
      : [
          table(
            [
              { header: "ORDER_ID" },
              { header: "TYPE" },
              { header: "PARTNER_ID" },
              { header: "AGE", align: "right" },
              { header: "FLAG" },
            ],
            data.map((o) => [
              o.order_id,
              o.type,
              o.partner_id,
              age(o.age_seconds),
              o.given_up ? "GIVEN UP" : "",
            ]),
          ),
          "",
          `GIVEN UP: pending longer than PENDING_GIVE_UP_HOURS (${give_up_hours} h); the money stays held until you`,
          "settle it: npm run cli -- orders settle <order_id> --completed|--failed (the carrier is asked first).",
        ].join("\n");
  return { json: { give_up_hours, data }, text };
}

function checkOrderId(order_id: string): string {
  if (!ORDER_ID.test(order_id))
    throw new CliError("invalid_argument", `"${order_id.slice(0, 40)}" is not an order id (ord_...)`);
  return order_id;
}

async function show(ctx: CliContext, order_id: string): Promise<CommandOutput> {
  const order = await orderOf(ctx.db, order_id);
  if (!order) throw new CliError("not_found", `no order ${order_id}`);
  const refund = await refundStatus(ctx.db, order_id);
  const json = {
    order_id,
    partner_id: order.partner_id,
    type: order.type,
    status: order.status,
    total_minor: order.total_minor,
    currency: order.currency,
    iccid: order.iccid,
    client_reference: order.client_reference,
    failure_code: order.failure_code,
    created_at: timestamp(order.created_at),
    resolved_at: timestamp(order.resolved_at),
    refunded_at: timestamp(order.refunded_at),
    refund:
      refund === null
        ? null
        : {
            ...refund,
            lease_until: timestamp(refund.lease_until),
            created_at: timestamp(refund.created_at),
            refunded_at: timestamp(refund.refunded_at),
          },
  };
  const text = fields([
    ["order_id", order_id],
    ["partner_id", order.partner_id],
    ["type", order.type],
    ["status", order.status],
    ["total", `${order.total_minor} ${order.currency}`],
    ["iccid", order.iccid],
    ["client_reference", order.client_reference],
    ["failure_code", order.failure_code],
    ["created_at", json.created_at],
    ["resolved_at", json.resolved_at],
    ["refunded_at", json.refunded_at],
    ["refund", refund === null ? null : `${refund.state} after ${refund.attempts} carrier attempts`],
    ["refund_last_error", refund?.last_error ?? null],
  ]);
  return { json, text };
}

type Settle = { order_id: string; wanted: Settlement };

function checkSettle({ positionals, options }: CommandArgs): Settle {
  const order_id = checkOrderId(positionals[0] ?? "");
  if ((options.completed === undefined) === (options.failed === undefined)) {
    throw new CliError("invalid_argument", "say how to settle it: exactly one of --completed or --failed");
  }
  return { order_id, wanted: options.completed !== undefined ? "completed" : "failed" };
}

async function settle(ctx: CliContext, { order_id, wanted }: Settle): Promise<CommandOutput> {
  try {
    const order = await withCarrier(ctx.config, ctx.pool, (carrier) =>
      settlePendingOrder(withCarrierContext(ctx, carrier), order_id, wanted, orderFinishers(ctx.config)),
    );
    const json = { order_id, status: order.status, iccid: order.iccid, failure_code: order.failure_code };
    const text = [
      `Order ${order_id} settled as ${order.status}.`,
      fields([
        ["iccid", order.iccid],
        ["failure_code", order.failure_code],
      ]),
    ].join("\n");
    return { json, text };
  } catch (error) {
    if (error instanceof SettlementRefused) throw new CliError(error.code, `not settled: ${error.message}`);
    throw error;
  }
}

export const orderCommands: readonly Command[] = [
  {
    group: "orders",
    name: "show",
    args: ["<order_id>"],
    options_usage: "",
    options: [],
    summary: "One order: status (pending, completed, failed, refunded), total, eSIM, and its refund if any",
    example: "npm run cli -- orders show ord_…",
    prepare: ({ positionals }) => {
      const order_id = checkOrderId(positionals[0] ?? "");
      return (ctx) => show(ctx, order_id);
    },
  },
  {
    group: "orders",
    name: "pending",
    args: [],
    options_usage: "[--limit N]",
    options: ["limit"],
    summary: "List pending orders, oldest first, with their age; GIVEN UP past PENDING_GIVE_UP_HOURS",
    example: "npm run cli -- orders pending",
    prepare: ({ options }) => {
      const max = limit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      return (ctx) => pending(ctx, max);
    },
  },
  {
    group: "orders",
    name: "settle",
    args: ["<order_id>"],
    options_usage: "--completed|--failed",
    options: ["completed", "failed"],
    summary:
      "Finish a pending order as the carrier allows (asked first): provisioned -> --completed, else --failed",
    example: "npm run cli -- orders settle ord_… --failed",
    prepare: (args) => {
      const checked = checkSettle(args);
      return (ctx) => settle(ctx, checked);
    },
  },
];
