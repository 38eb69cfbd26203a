// POST /v1/orders/cart (spec 4.2): reserve a package at today's price, one eSIM or a group of them.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, Money, money, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { rfc3339 } from "../shared/time.ts";
import { createCart, MAX_QUANTITY } from "./create-cart.ts";

const CreateCartBody = Type.Object(
  {
    package_id: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: NO_CONTROL_CHARACTERS,
      description: "From GET /esim/destination/{code}/packages.",
    }),
    start_date: Type.Optional(
      Type.Union([Type.String({ format: "date", maxLength: 10 }), Type.Null()], {
        description:
          "YYYY-MM-DD, from today (UTC) to 180 days ahead. Absent or null: the plan starts when the eSIM first connects.",
      }),
    ),
    quantity: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_QUANTITY,
        description:
          `eSIMs of the package, 1 to ${MAX_QUANTITY} (default 1): a group order. Its submit buys them all in one order ` +
          "with one hold of quantity x price; each eSIM is provisioned on its own and only those provisioned are charged.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Cart = Type.Object(
  {
    cart_key: Type.String({
      description: "Submit it to POST /orders/submit. Also the idempotency key of that submit.",
    }),
    package_id: Type.String(),
    start_date: Type.Union([Type.String({ format: "date" }), Type.Null()]),
    expires_at: Type.String({
      format: "date-time",
      description: "The reservation holds until then (30 minutes).",
    }),
    quantity: Type.Integer({
      minimum: 1,
      maximum: MAX_QUANTITY,
      description: "eSIMs of the package in this cart.",
    }),
    total: Money,
  },
  { additionalProperties: false },
);

export const createCartRoute = endpoint({
  method: "POST",
  url: "/orders/cart",
  schema: {
    operationId: "createCart",
    summary: "Reserve a package in a cart",
    description:
      "The price is fixed for the cart's lifetime, even if the catalog changes meanwhile. `total` is `quantity` x " +
      "the package's price. A `quantity` above 1 makes a group order: its submit buys every eSIM in one order, " +
      "with one traveller per eSIM (`travellers`), and charges only the eSIMs the carrier makes.",
    tags: ["Orders"],
    security: PARTNER_SECURITY,
    body: CreateCartBody,
    response: {
      201: Cart,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "package_not_found",
        "invalid_start_date",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const cart = await createCart(ctx.db, ctx.config, {
      partner_id: request.partner!.partner_id,
      package_id: request.body.package_id,
      start_date: request.body.start_date ?? null,
      quantity: request.body.quantity ?? 1,
    });
    return reply.code(201).send({
      cart_key: cart.cart_key,
      package_id: cart.package_id,
      start_date: cart.start_date,
      expires_at: rfc3339(cart.expires_at),
      quantity: cart.quantity,
      total: money(cart.total_minor, cart.currency),
    });
  },
});
