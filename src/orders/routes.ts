// POST /v1/orders/submit, GET /v1/orders/{orderID}, GET /v1/profile/orders.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import type { App } from "../shared/http-types.ts";
import { sendProblem } from "../shared/problem.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { CompletedOutcomes } from "./completed-outcomes.ts";
import { checkEndUser, EndUserFields } from "./end-user.ts";
import { DEFAULT_PAGE_SIZE, listOrders, MAX_PAGE_SIZE } from "./list-orders.ts";
import { type OrderRow, orderById, purchasesOf } from "./orders.sql.ts";
import { Order, renderOrder } from "./render-order.ts";
import { type HttpOutcome, outcomeOf } from "./stored-outcome.ts";
import { RETRY_AFTER_S, submitOrder } from "./submit-order.ts";

const SubmitBody = Type.Object(
  {
    cart_key: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: NO_CONTROL_CHARACTERS,
      description: "From POST /orders/cart. Retrying with it is safe.",
    }),
    ...EndUserFields,
  },
  { additionalProperties: false },
);

const OrderPage = Type.Object(
  {
    data: Type.Array(Order),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);

/** Sends an order's outcome: 200 completed, 502 failed, 503 still pending after this attempt. */
export async function sendOrderOutcome(
  ctx: AppContext,
  reply: FastifyReply,
  order: OrderRow,
): Promise<FastifyReply> {
  return sendOutcome(reply, order, await outcomeOf(ctx.db, order, String(reply.request.id)));
}

function sendOutcome(reply: FastifyReply, order: OrderRow, outcome: HttpOutcome | null): FastifyReply {
  if (order.status === "failed") {
    // The partner gets a fixed detail; the operator sees what the carrier actually said.
    reply.request.log.warn(
      { order_id: order.order_id, failure_code: order.failure_code, carrier_refusal: order.carrier_refusal },
      "order failed",
    );
  }
  if (outcome === null) {
    return sendProblem(
      reply,
      new ApiError(
        "carrier_unavailable",
        `The carrier did not answer in time for order ${order.order_id}. Its price is held, and charged only ` +
          "if the carrier completes it; retry with the same key to get the outcome.",
        { headers: { "retry-after": String(RETRY_AFTER_S) }, order_id: order.order_id },
      ),
    );
  }
  return sendBytes(reply, outcome);
}

function sendBytes(reply: FastifyReply, outcome: HttpOutcome): FastifyReply {
  return reply.code(outcome.status).type(outcome.content_type).send(outcome.body);
}

export async function orderRoutes(app: App, ctx: AppContext): Promise<void> {
  const completed = new CompletedOutcomes();

  app.post(
    "/orders/submit",
    {
      schema: {
        operationId: "submitOrder",
        summary: "Submit a cart: pay from the wallet and provision the eSIM",
        description:
          "Idempotent by `cart_key`: retrying after a timeout returns 200 with the same `orderID` and `purchases`, " +
          "without a second charge, provisioning or email. 409 `request_in_progress` while the first attempt runs.",
        tags: ["Orders"],
        security: PARTNER_SECURITY,
        body: SubmitBody,
        response: {
          200: Order,
          ...errorResponses(
            "unauthorized",
            "wrong_environment",
            "insufficient_balance",
            "cart_not_found",
            "request_in_progress",
            "cart_expired",
            "invalid_start_date",
            "carrier_error",
            "carrier_unavailable",
          ),
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const partner_id = request.partner!.partner_id;
      const input = {
        cart_key: body.cart_key,
        email: body.email,
        phone: body.phone,
        first_name: body.first_name,
        last_name: body.last_name,
        client_reference: body.client_reference ?? null,
      };
      // The checks submitOrder starts with, first: a retry is refused or answered alike either way.
      checkEndUser(input);
      const replayed = completed.find(partner_id, input.cart_key);
      if (replayed !== null) return sendBytes(reply, replayed);
      const order = await submitOrder(ctx, partner_id, input);
      const outcome = await outcomeOf(ctx.db, order, String(request.id));
      if (outcome !== null && order.status === "completed")
        completed.remember(partner_id, input.cart_key, outcome);
      return sendOutcome(reply, order, outcome);
    },
  );

  app.get(
    "/orders/:orderID",
    {
      schema: {
        operationId: "getOrder",
        summary: "One of your orders",
        tags: ["Orders"],
        security: PARTNER_SECURITY,
        params: Type.Object({
          orderID: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
        }),
        response: { 200: Order, ...errorResponses("unauthorized", "wrong_environment", "order_not_found") },
      },
    },
    async (request, reply) => {
      const order = await orderById(ctx.db, request.params.orderID, request.partner!.partner_id);
      if (!order) throw new ApiError("order_not_found", "No such order for this partner.");
      return reply.send(renderOrder(order, await purchasesOf(ctx.db, [order.order_id])));
    },
  );

  app.get(
    "/profile/orders",
    {
      schema: {
        operationId: "listOrders",
        summary: "Your orders, newest first",
        description:
          "Pages stay stable while new orders arrive. Filter by the `client_reference` you stored.",
        tags: ["Orders"],
        security: PARTNER_SECURITY,
        querystring: Type.Object(
          {
            client_reference: Type.Optional(
              Type.String({ minLength: 1, maxLength: 128, pattern: NO_CONTROL_CHARACTERS }),
            ),
            limit: Type.Optional(
              Type.String({
                pattern: "^(100|[1-9][0-9]?)$",
                description: `1-${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}.`,
              }),
            ),
            cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: OrderPage, ...errorResponses("unauthorized", "wrong_environment") },
      },
    },
    async (request) => {
      const query = request.query;
      return listOrders(ctx.db, {
        partner_id: request.partner!.partner_id,
        client_reference: query.client_reference ?? null,
        limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
        cursor: query.cursor ?? null,
      });
    },
  );
}
