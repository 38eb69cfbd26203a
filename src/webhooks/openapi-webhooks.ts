// The OpenAPI 3.1 `webhooks` section: one entry per event type, with the Event it posts (its `data`
// the resource of that type) and the Standard Webhooks headers. Built from the same schemas as the
// routes, so the payloads documented are the payloads rendered.
import { type TSchema, Type } from "typebox";
import { CatalogChange } from "../catalog/render-catalog-change.ts";
import { Esim } from "../esims/render-esim.ts";
import { EVENT_TYPES, type EventType } from "../events/record-event.ts";
import { Order } from "../orders/render-order.ts";
import { Money } from "../shared/schemas.ts";
import { RETRY_DELAYS_S } from "./retry-schedule.ts";

const WalletData = Type.Object(
  {
    balance: Money,
    threshold: Type.Union([Money, Type.Null()], {
      description: "The low-balance alert level, or null when off.",
    }),
    amount: Type.Optional(Money),
    reference: Type.Optional(Type.String({ description: "wallet.credited: the credit's reference." })),
  },
  { additionalProperties: false },
);

const UsageThresholdData = Type.Object({
  ...Esim.properties,
  threshold_percent: Type.Union([Type.Literal(50), Type.Literal(80), Type.Literal(100)]),
  bundle_order_id: Type.String({ description: "The order of the bundle whose data crossed the line." }),
});

const TestData = Type.Object(
  { endpoint_id: Type.String(), message: Type.String() },
  { additionalProperties: false },
);

const DATA: Record<EventType, { data: TSchema; about: string }> = {
  "order.completed": {
    data: Order,
    about: "An order completed: the eSIM or top-up is provisioned and paid.",
  },
  "order.failed": { data: Order, about: "An order failed: the carrier declined it; nothing was charged." },
  "order.refunded": { data: Order, about: "An order was refunded to the wallet." },
  "esim.installed": { data: Esim, about: "The eSIM's profile was downloaded to a device." },
  "esim.activated": { data: Esim, about: "The eSIM used data for the first time." },
  "esim.usage_threshold": {
    data: UsageThresholdData,
    about: "A bundle used 50, 80 or 100 percent of its data (once each per bundle).",
  },
  "esim.expiring": { data: Esim, about: "The eSIM's last bundle expires within 24 hours." },
  "esim.expired": { data: Esim, about: "Every bundle on the eSIM has expired." },
  "esim.deleted": { data: Esim, about: "The profile was removed from the device." },
  "wallet.credited": { data: WalletData, about: "The operator credited the wallet." },
  "wallet.balance_low": { data: WalletData, about: "A purchase took the balance below the alert threshold." },
  "webhook.test": {
    data: TestData,
    about: "Sent by POST /v1/webhook-endpoints/{endpoint_id}/test, to that endpoint only.",
  },
  "package.added": {
    data: CatalogChange,
    about:
      "A package is now offered to you: the change of GET /v1/catalog/changes, rendered when the event was recorded.",
  },
  "package.updated": {
    data: CatalogChange,
    about:
      "A package's fields, destinations or your price changed (an import, a supplier sync, your price list): the change of GET /v1/catalog/changes.",
  },
  "package.removed": {
    data: CatalogChange,
    about: "A package is no longer offered (`package` is null): the change of GET /v1/catalog/changes.",
  },
};

const HEADERS = [
  ["webhook-id", "The event id (`evt_…`), the same on every attempt: deduplicate by it."],
  ["webhook-timestamp", "Unix seconds of this attempt; refuse ones far from now (replays)."],
  [
    "webhook-signature",
    "`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64-decoded bytes " +
      "after `whsec_`; space-separated signatures during a secret rotation (two, up to five after several " +
      "rotations within 24 hours). Any Standard Webhooks library verifies it.",
  ],
] as const;

const schedule = RETRY_DELAYS_S.map((s) =>
  s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`,
).join(", ");

function subscribers(_type: EventType): string {
  return " (or to all types)";
}

function webhookOperation(type: EventType) {
  const { data, about } = DATA[type];
  const event = Type.Object(
    { id: Type.String(), type: Type.Literal(type), created_at: Type.String({ format: "date-time" }), data },
    { additionalProperties: false },
  );
  return {
    post: {
      operationId: `webhook_${type.replace(".", "_")}`,
      summary: type,
      description:
        `${about} POSTed to each enabled endpoint subscribed to \`${type}\`${subscribers(type)}. A 2xx within 15 s ` +
        `is success; otherwise retried after ${schedule}, then failed. 410 Gone disables the endpoint.`,
      tags: ["Webhooks"],
      // Nothing to authenticate on your side but the signature in the headers.
      security: [],
      parameters: HEADERS.map(([name, description]) => ({
        name,
        in: "header",
        required: true,
        description,
        schema: { type: "string" },
      })),
      requestBody: { required: true, content: { "application/json": { schema: event } } },
      responses: {
        "200": { description: "Received. Any 2xx counts; the body is ignored (at most 64 KiB is read)." },
        "410": { description: "Gone: the endpoint is disabled at once and nothing more is sent." },
      },
    },
  };
}

/** The `webhooks` object of the OpenAPI document, as plain JSON. */
export function openapiWebhooks(): Record<string, unknown> {
  const entries = EVENT_TYPES.map((type) => [type, webhookOperation(type)] as const);
  return JSON.parse(JSON.stringify(Object.fromEntries(entries)));
}
