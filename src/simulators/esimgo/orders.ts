// POST /orders, GET /orders and GET /orders/{reference}: one ordering endpoint for new eSIMs,
// top-ups (an order line carrying iccids) and purchases into inventory (assign false).
// Sources: [DOC:api/v2_4/operations/orders/post] and v2.2/v2.3 for the fields and usage rules,
// [DOC:api/v2_4/operations/orders/get] for the order object, [GO] orders.go for the names.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { type Static, Type } from "typebox";
import { inTransaction } from "../../db/pool.ts";
import { type Answer, amount, type FakeContext, failure, ok } from "./answers.ts";
import { type Bundle, findBundle, priceCents } from "./catalogue.ts";
import { type EsimRow, insertAssignment, insertEsim, lockEsims, nextIccidSerial } from "./esims.sql.ts";
import { digits, iccidFromSerial, newMatchingId, SMDP_ADDRESS } from "./inventory.ts";
import {
  type CreatedAtBounds,
  insertOrder,
  lockOrganisation,
  moveBalance,
  type OrderEsim,
  type OrderLine,
  type OrderRow,
  selectOrder,
  selectOrderEsims,
  selectOrders,
} from "./orders.sql.ts";
import {
  INSUFFICIENT_BALANCE_STATUS,
  LIST_PAGE,
  MESSAGES,
  NOT_FOUND_STATUS,
  ORDER_DATE_FIELD,
  ORDER_LIST_IS_BARE_ARRAY,
  ORDER_STATUS,
} from "./unconfirmed.ts";

/** "Any Order or Bundle Apply that includes more than 5 Bundles will be processed asynchronously" (release 2.2.0). */
const MAX_SYNCHRONOUS_BUNDLES = 5;
const MAX_BUNDLES_PER_ORDER = 1_000;
const BYTES_PER_MB = 1_000_000;

const OrderItem = Type.Object({
  type: Type.Literal("bundle"),
  quantity: Type.Integer({ minimum: 1, maximum: MAX_BUNDLES_PER_ORDER }),
  item: Type.String({ minLength: 1, maxLength: 200 }),
  iccids: Type.Optional(
    Type.Array(Type.String({ pattern: "^[0-9]{10,22}$" }), { maxItems: MAX_BUNDLES_PER_ORDER }),
  ),
  allowReassign: Type.Optional(Type.Boolean()),
});
export const OrderBody = Type.Object({
  type: Type.Union([Type.Literal("validate"), Type.Literal("transaction")]),
  assign: Type.Optional(Type.Boolean()),
  order: Type.Array(OrderItem, { minItems: 1, maxItems: 50 }),
});
export type OrderBody = Static<typeof OrderBody>;
type OrderItem = Static<typeof OrderItem>;

/** The documented usage rules, checked before anything is locked. */
function checkRules(body: OrderBody): string | null {
  let bundles = 0;
  for (const line of body.order) {
    if (!findBundle(line.item)) return MESSAGES.unknown_bundle(line.item);
    if (line.iccids && line.iccids.length > 0) {
      if (!body.assign) return "eSIM ICCIDs can only be specified if assign is set to true";
      if (line.iccids.length !== line.quantity)
        return "If ICCIDs are provided, quantity is required to match the number of ICCIDs for each bundle";
    }
    bundles += line.quantity;
  }
  return bundles > MAX_BUNDLES_PER_ORDER ? `At most ${MAX_BUNDLES_PER_ORDER} bundles per order` : null;
}

/** Per ICCID asked for: the eSIM to top up, or null when allowReassign puts the bundle on a new one. */
type Targets = Map<string, string | null>;

async function resolveTargets(client: pg.PoolClient, body: OrderBody): Promise<Targets | Answer> {
  const asked = body.order.flatMap((line) => line.iccids ?? []);
  const found = new Map((await lockEsims(client, asked)).map((esim) => [esim.iccid, esim]));
  const targets: Targets = new Map();
  for (const line of body.order) {
    for (const iccid of line.iccids ?? []) {
      const esim = found.get(iccid);
      if (!esim) return failure(400, MESSAGES.unknown_iccid(iccid));
      if (esim.deactivated) return failure(400, MESSAGES.deactivated(iccid));
      const refusal = incompatibility(esim, line);
      if (refusal) return failure(400, refusal);
      targets.set(iccid, esim.incompatible ? null : iccid);
    }
  }
  return targets;
}

function incompatibility(esim: EsimRow, line: OrderItem): string | null {
  if (!esim.incompatible || line.allowReassign) return null;
  return MESSAGES.incompatible(esim.iccid, line.item);
}

function pricedLines(body: OrderBody): OrderLine[] {
  return body.order.map((line) => ({
    type: "bundle",
    item: line.item,
    quantity: line.quantity,
    price_cents: priceCents(findBundle(line.item)!),
    allow_reassign: line.allowReassign ?? false,
  }));
}

export async function placeOrder(
  context: FakeContext,
  body: OrderBody,
  source_ip: string,
  async_ms: number,
): Promise<Answer> {
  const rule = checkRules(body);
  if (rule) return failure(400, rule);
  const lines = pricedLines(body);
  const total_cents = lines.reduce((sum, line) => sum + line.price_cents * line.quantity, 0);
  return inTransaction(context.pool, async (client) => {
    const organisation = await lockOrganisation(client);
    if (total_cents > organisation.balance_cents)
      return failure(INSUFFICIENT_BALANCE_STATUS, MESSAGES.insufficient_balance);
    const targets = await resolveTargets(client, body);
    if (!(targets instanceof Map)) return targets;
    if (body.type === "validate")
      return ok(validation(lines, total_cents, organisation.currency, body.assign ?? false));
    const bundles = lines.reduce((sum, line) => sum + line.quantity, 0);
    const reference = randomUUID();
    await insertOrder(client, {
      reference,
      assigned: body.assign ?? false,
      total_cents,
      currency: organisation.currency,
      source_ip,
      lines,
      async_ms: bundles > MAX_SYNCHRONOUS_BUNDLES ? async_ms : 0,
    });
    if (body.assign) await assignBundles(client, reference, body, targets);
    await moveBalance(client, -total_cents);
    return ok(await placedAnswer(client, reference, bundles));
  });
}

/** One assignment per bundle bought, on the ICCID asked for or on a new eSIM. */
async function assignBundles(client: pg.PoolClient, reference: string, body: OrderBody, targets: Targets) {
  let sequence = 0;
  for (const [line_index, line] of body.order.entries()) {
    const bundle = findBundle(line.item)!;
    for (let unit = 0; unit < line.quantity; unit++) {
      const asked = line.iccids?.[unit];
      const iccid = (asked && targets.get(asked)) || (await newEsim(client, reference));
      await insertAssignment(client, assignmentOf(bundle, reference, line_index, iccid, sequence++));
    }
  }
}

function assignmentOf(
  bundle: Bundle,
  reference: string,
  line_index: number,
  iccid: string,
  sequence: number,
) {
  return {
    // The documented example's shape: "<uuid>-<n>".
    reference: `${reference}-${sequence}`,
    order_reference: reference,
    line_index,
    iccid,
    bundle_name: bundle.name,
    description: bundle.description,
    price_cents: priceCents(bundle),
    duration_days: bundle.duration,
    initial_bytes: bundle.dataAmount * BYTES_PER_MB,
  };
}

async function newEsim(client: pg.PoolClient, order_reference: string): Promise<string> {
  const iccid = iccidFromSerial(await nextIccidSerial(client));
  await insertEsim(client, {
    iccid,
    matching_id: newMatchingId(),
    smdp_address: SMDP_ADDRESS,
    pin: digits(4),
    puk: digits(8),
    order_reference,
  });
  return iccid;
}

function validation(lines: OrderLine[], total_cents: number, currency: string, assigned: boolean) {
  return {
    order: lines.map((line) => lineBody(line, [])),
    total: amount(total_cents),
    valid: true,
    currency,
    createdDate: new Date().toISOString(),
    assigned,
  };
}

async function placedAnswer(client: pg.PoolClient, reference: string, bundles: number) {
  const order = (await selectOrder(client, reference))!;
  // "eSIM data will only be available on small (<= 5 eSIMs) orders" ([DOC:api/v2_3/operations/orders/post]).
  const esims = bundles > MAX_SYNCHRONOUS_BUNDLES ? [] : await selectOrderEsims(client, [reference]);
  const synchronous = bundles <= MAX_SYNCHRONOUS_BUNDLES;
  return { ...orderBody({ ...order, ready: synchronous }, esims, ORDER_DATE_FIELD.placed), valid: true };
}

function lineBody(line: OrderLine, esims: OrderEsim[]) {
  return {
    type: line.type,
    item: line.item,
    quantity: line.quantity,
    subTotal: amount(line.price_cents * line.quantity),
    pricePerUnit: amount(line.price_cents),
    // Capital A as printed in [DOC:api/v2_4/operations/orders/get].
    AllowReassign: line.allow_reassign,
    esims: esims.map((esim) => ({
      iccid: esim.iccid,
      matchingId: esim.matching_id,
      smdpAddress: esim.smdp_address,
    })),
    iccids: esims.map((esim) => esim.iccid),
  };
}

/** The order object of [DOC:api/v2_4/operations/orders/get]; eSIM data only once processed. */
export function orderBody(order: OrderRow, esims: OrderEsim[], date_field: string) {
  const mine = (index: number) =>
    order.ready
      ? esims.filter((esim) => esim.order_reference === order.reference && esim.line_index === index)
      : [];
  const count = order.ready ? esims.filter((esim) => esim.order_reference === order.reference).length : 0;
  return {
    order: order.lines.map((line, index) => lineBody(line, mine(index))),
    total: amount(order.total_cents),
    currency: order.currency,
    status: order.ready ? ORDER_STATUS.completed : ORDER_STATUS.processing,
    statusMessage: statusMessage(order, count),
    orderReference: order.reference,
    [date_field]: order.created_at.toISOString(),
    assigned: order.assigned,
    sourceIP: order.source_ip,
  };
}

function statusMessage(order: OrderRow, esims: number): string {
  if (!order.ready) return "Order processing";
  if (!order.assigned) return "Order completed: bundles added to inventory";
  return `Order completed: ${esims} eSIM${esims === 1 ? "" : "s"} assigned`;
}

export async function getOrder(pool: pg.Pool, reference: string): Promise<Answer> {
  const order = await selectOrder(pool, reference);
  if (!order) return failure(NOT_FOUND_STATUS, MESSAGES.unknown_order(reference));
  return ok(orderBody(order, await selectOrderEsims(pool, [reference]), ORDER_DATE_FIELD.listed));
}

export const ListOrdersQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_PAGE.max })),
  includeIccids: Type.Optional(Type.Boolean()),
  createdAt: Type.Optional(
    Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 5 })]),
  ),
});
export type ListOrdersQuery = Static<typeof ListOrdersQuery>;

const OPERATORS = ["gte", "gt", "lte", "lt", "eq"] as const;

/** `createdAt=gte:2024-03-01T00:00:00.000Z`, repeatable; without an operator: eq ([DOC:changelog/] v2.2). */
export function createdAtBounds(values: string | string[] | undefined): CreatedAtBounds | string {
  const bounds: CreatedAtBounds = { gte: null, gt: null, lte: null, lt: null, eq: null };
  for (const value of [values ?? []].flat()) {
    const match = /^(gte|gt|lte|lt|eq):(.+)$/.exec(value);
    const operator = (match?.[1] ?? "eq") as (typeof OPERATORS)[number];
    const at = new Date(match?.[2] ?? value);
    if (Number.isNaN(at.getTime())) return `createdAt: not a date: ${value}`;
    bounds[operator] = at;
  }
  return bounds;
}

export async function listOrders(pool: pg.Pool, query: ListOrdersQuery): Promise<Answer> {
  const bounds = createdAtBounds(query.createdAt);
  if (typeof bounds === "string") return failure(400, bounds);
  const limit = query.limit ?? LIST_PAGE.default;
  const orders = await selectOrders(pool, bounds, limit, ((query.page ?? 1) - 1) * limit);
  // includeIccids: "From v2.3.0 onwards, this data will be included by default".
  const esims =
    query.includeIccids === false
      ? []
      : await selectOrderEsims(
          pool,
          orders.map((order) => order.reference),
        );
  const bodies = orders.map((order) => orderBody(order, esims, ORDER_DATE_FIELD.listed));
  return ok(ORDER_LIST_IS_BARE_ARRAY ? bodies : { orders: bodies, pageCount: null, rows: bodies.length });
}
