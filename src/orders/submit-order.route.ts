// POST /v1/orders/submit (spec 4.3): pay for a cart from the wallet and provision the eSIM.
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { MAX_QUANTITY } from "../carts/create-cart.ts";
import type { AppContext } from "../shared/context.ts";
import { endpoint, type Handler } from "../shared/endpoint.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { LANGUAGE_TAG_MAX_LENGTH, SUPPORTED_LANGUAGES } from "../travellers/translate.ts";
import { CompletedOutcomes } from "./completed-outcomes.ts";
import {
  checkEndUser,
  checkLanguage,
  checkTravellers,
  EndUserFields,
  LANGUAGE_TAG_PATTERN,
  TravellerFields,
} from "./end-user.ts";
import { Order } from "./render-order.ts";
import { sendBytes, sendOutcome } from "./send-outcome.ts";
import { outcomeOf } from "./stored-outcome.ts";
import { type SubmitInput, submitOrder } from "./submit-order.ts";

/** Set on an answer an earlier request with the same cart_key reached (all three paths below). */
const IDEMPOTENT_REPLAYED = "idempotent-replayed";
const REPLAYED_HEADERS = { [IDEMPOTENT_REPLAYED]: "true" };

const SubmitBody = Type.Object(
  {
    cart_key: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: NO_CONTROL_CHARACTERS,
      description: "From POST /orders/cart. Retrying with it is safe.",
    }),
    ...EndUserFields,
    travellers: Type.Optional(
      Type.Union([Type.Array(TravellerFields, { minItems: 1, maxItems: MAX_QUANTITY }), Type.Null()], {
        description:
          "One traveller per eSIM of the cart (exactly the cart's `quantity`, else 400 `invalid_request`): each " +
          "gets an email with their own eSIM, `purchases[i]` being `travellers[i]`'s. Absent or null: the end user " +
          "above gets one email with every eSIM. In the sandbox the simulator's magic addresses act per traveller.",
      }),
    ),
    language: Type.Optional(
      Type.Union(
        [
          Type.String({ minLength: 2, maxLength: LANGUAGE_TAG_MAX_LENGTH, pattern: LANGUAGE_TAG_PATTERN }),
          Type.Null(),
        ],
        {
          description:
            "The traveller's language, a BCP 47 tag (`es`, `pt-BR`, `zh-Hans`). The confirmation email and the install " +
            "page use it if supported, else its base language (`pt-BR` -> `pt`), else English; `Order.language` says " +
            `which. Supported: ${SUPPORTED_LANGUAGES.join(", ")}. Absent or null: English.`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const schema = {
  operationId: "submitOrder",
  summary: "Submit a cart: pay from the wallet and provision its eSIMs",
  description:
    "A cart of `quantity` > 1 is a group order: one order and one hold of the cart's total, each eSIM " +
    "provisioned on its own. Each `purchases` entry is `completed` or `failed` (refused by the carrier for good, " +
    "never charged); the order completes with the others and its `total` is what was charged. When every eSIM " +
    "is refused the answer is 502 `carrier_error`, nothing charged. `travellers` names one traveller per eSIM; in " +
    "the sandbox their magic addresses act per traveller. A group order is not refunded through the API (409 " +
    "`refund_not_allowed`, reason `group_order`).\n\n" +
    "Idempotent by `cart_key`: retrying after a timeout returns 200 with the same `orderID` and `purchases`, " +
    "without a second charge, provisioning or email, and with the header `Idempotent-Replayed: true` (on every " +
    "answer an earlier submit of the cart reached: 200, 502 `carrier_error`). 409 `request_in_progress` while the first attempt runs. " +
    "A retry answers the body the completed purchase answers, byte for byte, even after a refund: " +
    "`GET /orders/{orderID}` shows the order as it is now. 503 `carrier_unavailable` without an `order_id`: " +
    "the package's network cannot be reached now; nothing was charged and no order was created.",
  tags: ["Orders"],
  security: PARTNER_SECURITY,
  body: SubmitBody,
  response: {
    200: Order,
    ...errorResponses(
      "unauthorized",
      "wrong_environment",
      "insufficient_scope",
      "partner_suspended",
      "ip_not_allowed",
      "insufficient_balance",
      "cart_not_found",
      "request_in_progress",
      "cart_expired",
      "invalid_start_date",
      "carrier_error",
      "carrier_unavailable",
    ),
  },
};

export const submitOrderRoute = endpoint({
  method: "POST",
  url: "/orders/submit",
  schema,
  handler: (ctx) => {
    // Per registration, so per process: see completed-outcomes.ts.
    const completed = new CompletedOutcomes();
    // Not async: a retry answered from memory goes through no promise; the rest is submitAndSend.
    const handler: Handler<typeof schema> = (request, reply) => {
      const { body } = request;
      const partner_id = request.partner!.partner_id;
      const input = {
        cart_key: body.cart_key,
        email: body.email,
        phone: body.phone,
        first_name: body.first_name,
        last_name: body.last_name,
        client_reference: body.client_reference ?? null,
        language: body.language ?? null,
        travellers: body.travellers ?? null,
      };
      // The checks submitOrder starts with, first: a retry is refused or answered alike either way.
      // (A retry with the very bytes already answered is sent earlier, by from_bytes: these checks
      // depend only on its bytes, and they passed them once.)
      checkEndUser(input);
      checkLanguage(input.language);
      if (input.travellers !== null) checkTravellers(input.travellers);
      const replayed = completed.find(partner_id, input.cart_key);
      if (replayed !== null) {
        if (request.bodyBytes !== null)
          completed.rememberBytes(partner_id, input.cart_key, request.bodyBytes);
        reply.header(IDEMPOTENT_REPLAYED, "true");
        sendBytes(reply, replayed);
        return;
      }
      return submitAndSend(ctx, reply, completed, partner_id, input);
    };
    return {
      handler,
      // The same request again, byte for byte, and its cart's answer kept: sent before any parse.
      from_bytes: (request, bytes) => {
        if (request.partner === null) return null;
        const replayed = completed.findByBytes(request.partner.partner_id, bytes);
        return replayed === null ? null : { ...replayed, headers: REPLAYED_HEADERS };
      },
    };
  },
});

/** A new submit, or a retry not answered from memory: the database decides, and a completed answer is kept. */
async function submitAndSend(
  ctx: AppContext,
  reply: FastifyReply,
  completed: CompletedOutcomes,
  partner_id: string,
  input: SubmitInput,
): Promise<void> {
  const { order, replayed } = await submitOrder(ctx, partner_id, input);
  if (replayed) reply.header(IDEMPOTENT_REPLAYED, "true");
  const outcome = await outcomeOf(ctx.db, order, String(reply.request.id));
  // A refunded order answers as it did when it completed (stored-outcome.ts): final too.
  if (outcome !== null && (order.status === "completed" || order.status === "refunded")) {
    completed.remember(partner_id, input.cart_key, outcome);
    const bytes = reply.request.bodyBytes;
    if (bytes !== null) completed.rememberBytes(partner_id, input.cart_key, bytes);
  }
  sendOutcome(reply, order, outcome);
}
