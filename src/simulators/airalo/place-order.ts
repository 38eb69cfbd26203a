// POST /v2/orders (synchronous) and POST /v2/orders-async [SPEC place-order],
// [DOC:submit-order-11883024e0], [DOC:submit-order-async-11883025e0]. One transaction takes the
// credit, writes the order and mints its eSIMs, so an order exists completely or not at all; no
// idempotency key exists on Airalo (none documented), so a repeated POST makes a second order.
import { randomBytes, randomInt } from "node:crypto";
import { inTransaction } from "../../db/pool.ts";
import { luhnCheckDigit } from "../../lib/luhn.ts";
import {
  creditCents,
  debitCredit,
  insertOrder,
  insertSims,
  nextIccidSerials,
  type OrderRow,
  type SimRow,
} from "./airalo.sql.ts";
import { type Answer, airaloTime, businessError, invalid, ok } from "./answers.ts";
import { type Fields, text } from "./bodies.ts";
import { findPackage, type Package } from "./catalog.ts";
import type { Context } from "./context.ts";
import { orderShape } from "./shapes.ts";

/**
 * Issuer prefix of the fake's ICCIDs, as in the docs' order example "8944465400003573253" ([SPEC
 * place-order], docs/suppliers/airalo.md §3): "8944465400", an 8-digit serial and the Luhn digit,
 * 19 digits (the README's figure; the prefix once lost a digit and made 18-digit ICCIDs).
 */
const ICCID_PREFIX = "8944465400";

export type OrderRequest = {
  pkg: Package;
  quantity: number;
  description: string | null;
  brand_settings_name: string | null;
};

/** The documented 422s of POST /v2/orders, in Laravel's wording; null when the request is sound. */
export function validateOrder(context: Context, fields: Fields): Answer | OrderRequest {
  const errors: Record<string, string> = {};
  const packageId = text(fields, "package_id");
  const found = packageId === null ? null : findPackage(packageId);
  if (packageId === null) errors.package_id = "The package id field is required.";
  else if (found?.pkg.type !== "sim") errors.package_id = "The selected package is invalid.";
  const quantityText = text(fields, "quantity");
  const quantity = Number(quantityText);
  if (quantityText === null) errors.quantity = "The quantity field is required.";
  else if (!/^\d+$/.test(quantityText)) errors.quantity = "The quantity must be an integer.";
  else if (quantity > 50) errors.quantity = "The quantity may not be greater than 50.";
  else if (quantity < 1) errors.quantity = "The quantity must be at least 1.";
  const type = text(fields, "type");
  if (type !== null && type !== "sim") errors.type = "The selected type is invalid.";
  const description = text(fields, "description");
  if (description !== null && description.length > 255)
    errors.description = "The description may not be greater than 255 characters.";
  const brand = text(fields, "brand_settings_name");
  if (brand !== null && !context.brands.includes(brand))
    errors.brand_settings_name = "Brand settings name doesn't exist.";
  if (text(fields, "to_email") !== null && !Array.isArray(fields.sharing_option))
    errors.sharing_option = "The sharing option field is required when to email is present.";
  if (Object.keys(errors).length > 0) return invalid(errors);
  const stock = context.settings().stock[found!.pkg.id];
  if (stock !== undefined && quantity > stock)
    return invalid({ quantity: `SIM quantity is not available. Available quantity: ${stock}.` });
  return { pkg: found!.pkg, quantity, description, brand_settings_name: brand };
}

/** The credit is short: thrown inside the order's transaction to roll it back whole. */
class CreditShort extends Error {}

/** Places a validated order: 200 with the order and its eSIMs, or 422 code 11 when the credit is short. */
export async function placeOrder(
  context: Context,
  order: OrderRequest,
  request_id: string | null,
): Promise<Answer> {
  const cost = order.pkg.net_price_cents * order.quantity;
  let placed: { row: OrderRow; sims: SimRow[] };
  try {
    placed = await inTransaction(context.pool, async (client) => {
      const row = await insertOrder(client, {
        type: "sim",
        package_id: order.pkg.id,
        quantity: order.quantity,
        description: order.description,
        topup_iccid: null,
        request_id,
        brand_settings_name: order.brand_settings_name,
        price_cents: order.pkg.price_cents,
        net_price_cents: order.pkg.net_price_cents,
      });
      const serials = await nextIccidSerials(client, order.quantity);
      const sims = await insertSims(
        client,
        serials.map((serial) => newSim(context, row, serial)),
      );
      // The debit last: the one account row is then locked for the debit and the commit only, so
      // concurrent orders do not queue behind each other's inserts (measured: 52 ms a debit at 32
      // concurrent orders when it came first; bench/README.md, purchase from a supplier).
      if ((await debitCredit(client, cost)) === null) throw new CreditShort();
      return { row, sims };
    });
  } catch (error) {
    if (!(error instanceof CreditShort)) throw error;
    const credit = await creditCents(context.pool);
    return businessError(11, `the order costs ${usd(cost)} USD, the balance is ${usd(credit)} USD`);
  }
  const stock = context.settings().stock;
  if (stock[order.pkg.id] !== undefined)
    stock[order.pkg.id] = Math.max(0, stock[order.pkg.id]! - order.quantity);
  return ok(orderShape(placed.row, placed.sims));
}

const usd = (cents: number) => (cents / 100).toFixed(2);

function newSim(
  context: Context,
  order: OrderRow,
  serial: number,
): Omit<SimRow, "id" | "used_mb" | "activated_at" | "recycled_at" | "refunded_at" | "created_at"> {
  const payload = `${ICCID_PREFIX}${String(serial).padStart(8, "0")}`;
  return {
    order_id: order.id,
    iccid: `${payload}${luhnCheckDigit(payload)}`,
    lpa: context.smdp_address,
    matching_id: matchingId(),
    package_id: order.package_id,
  };
}

const MATCHING_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** "YVTGM-5LZC6-PIC56-KFEZJ": four groups of five, as the docs' example. */
function matchingId(): string {
  const groups: string[] = [];
  for (let group = 0; group < 4; group++) {
    let part = "";
    for (let index = 0; index < 5; index++) part += MATCHING_ALPHABET[randomInt(MATCHING_ALPHABET.length)];
    groups.push(part);
  }
  return groups.join("-");
}

const NANOID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A 25-character nanoid-like request id ("3NhR3gKmqCWK7IWppurpDX3Cg", [SPEC place-order]). */
function requestId(): string {
  return [...randomBytes(25)].map((byte) => NANOID_ALPHABET[byte % NANOID_ALPHABET.length]).join("");
}

/**
 * POST /v2/orders-async: 202 {request_id, accepted_at} at once; the order is placed afterwards
 * and its answer (plus `request_id`, at the top level: UNCONFIRMED) POSTed to the webhook URL:
 * the request's `webhook_url`, else the async_orders opt-in, else the fake's default URL.
 * Not opted in and none given: 422 {"reason": "User is not opted in and no webhook URL provided."}.
 */
export async function placeOrderAsync(
  context: Context,
  fields: Fields,
  webhook_url: string | null,
): Promise<Answer> {
  const given = text(fields, "webhook_url");
  if (given !== null && !/^https?:\/\/\S+$/.test(given))
    return invalid({ webhook_url: "The webhook url format is invalid." });
  const url = given ?? webhook_url;
  const validated = validateOrder(context, fields);
  if ("status" in validated) return validated;
  if (url === null)
    return { status: 422, body: { reason: "User is not opted in and no webhook URL provided." } };
  const request_id = requestId();
  const accepted_at = airaloTime(new Date());
  setImmediate(() => {
    placeOrder(context, validated, request_id)
      .then((answer) =>
        context.webhooks.send("async_orders", url, { ...(answer.body as object), request_id }),
      )
      .catch((error: unknown) =>
        context.log(`airalo fake: async order ${request_id}: ${(error as Error).message}`),
      );
  });
  return ok({ request_id, accepted_at }, "success", 202);
}
