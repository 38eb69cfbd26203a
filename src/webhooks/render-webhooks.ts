// The WebhookEndpoint and Delivery objects of the contract ("Webhooks"), rendered from their rows.
import { type Static, Type } from "typebox";
import { EventTypeSchema } from "../events/render-event.ts";
import { NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";
import { rfc3339 } from "../shared/time.ts";
import type { DeliveryRow } from "./deliveries.sql.ts";
import type { EndpointRow } from "./endpoints.sql.ts";

export const MAX_ENDPOINTS_PER_PARTNER = 10;

const Timestamp = Type.String({ format: "date-time" });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: NO_CONTROL_CHARACTERS,
  description:
    "`https://` on a public address (checked after DNS, and again at every attempt). `http://` and private " +
    "addresses only where the service runs with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. No credentials in the URL, " +
    "no space (percent-encode it) and no fragment (`#…`, never sent).",
});
export const Description = Type.String({ maxLength: 500, pattern: "^[^\\x00-\\x1f\\x7f]*$" });
export const EventTypes = Type.Array(EventTypeSchema, {
  maxItems: 15,
  uniqueItems: true,
  description:
    "The event types sent to this endpoint; an empty array means all of them but `package.added`, " +
    "`package.updated` and `package.removed`, which are sent only to endpoints that list them.",
});
export const EndpointStatus = Type.Union([Type.Literal("enabled"), Type.Literal("disabled")]);

const endpointProperties = {
  endpoint_id: Type.String(),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  event_types: Type.Array(Type.String()),
  status: EndpointStatus,
  disabled_reason: Type.Union([Type.String(), Type.Null()], {
    description: "Why it is disabled: a 410 Gone, 5 days of failures, or you. Null when enabled.",
  }),
  created_at: Timestamp,
};

export const WebhookEndpoint = Type.Object(endpointProperties, { additionalProperties: false });
export type WebhookEndpointBody = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointProperties,
    secret: Type.String({
      description:
        "`whsec_` + base64 of 32 random bytes: the Standard Webhooks signing key. Shown this once.",
    }),
  },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    delivery_id: Type.String(),
    endpoint_id: Type.String(),
    event_id: Type.String({ description: "The `webhook-id` header of every attempt." }),
    event_type: Type.String(),
    status: Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")]),
    attempts: Type.Integer({ description: "Attempts started so far." }),
    last_attempt_at: NullableTimestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: "Null once final." }),
    last_response_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type DeliveryBody = Static<typeof Delivery>;

export function renderEndpoint(row: EndpointRow): WebhookEndpointBody {
  return {
    endpoint_id: row.endpoint_id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: rfc3339(row.created_at),
  };
}

export function renderDelivery(row: DeliveryRow): DeliveryBody {
  return {
    delivery_id: row.delivery_id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: row.last_attempt_at === null ? null : rfc3339(row.last_attempt_at),
    next_attempt_at: row.next_attempt_at === null ? null : rfc3339(row.next_attempt_at),
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    created_at: rfc3339(row.created_at),
  };
}
