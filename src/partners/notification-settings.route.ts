// GET and PUT /v1/profile/notifications: which emails the service sends a partner's travellers.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import type { NotificationSettingsRow } from "./traveller-settings.sql.ts";
import { getNotificationSettings, setNotificationSettings } from "./traveller-settings.ts";

const CONFIRMATION =
  "Our confirmation email of each new eSIM (default true). false: you email your travellers yourself; " +
  "POST /v1/orders/{orderID}/resend-email still sends it.";
const USAGE =
  "Email the traveller when 80% of a bundle's data is used and 24 hours before it expires, once each per " +
  "bundle, with a one-click unsubscribe (default false).";
const TOP_UP =
  "https URL in those emails where the traveller tops up; `{iccid}` is replaced by the eSIM's ICCID (default null).";

const NotificationsBody = Type.Object(
  {
    confirmation_email: Type.Optional(Type.Boolean({ description: CONFIRMATION })),
    traveller_usage_emails: Type.Optional(Type.Boolean({ description: USAGE })),
    top_up_url: Type.Optional(
      Type.Union([Type.String({ maxLength: 500, pattern: "^https://[^\\x00-\\x20\\x7f]+$" }), Type.Null()], {
        description: TOP_UP,
      }),
    ),
  },
  { additionalProperties: false, description: "Fields left out keep their value." },
);

export const NotificationsResponse = Type.Object(
  {
    confirmation_email: Type.Boolean({ description: CONFIRMATION }),
    traveller_usage_emails: Type.Boolean({ description: USAGE }),
    top_up_url: Type.Union([Type.String(), Type.Null()], { description: TOP_UP }),
  },
  { additionalProperties: false },
);

function renderSettings(row: NotificationSettingsRow) {
  return {
    confirmation_email: row.confirmation_email,
    traveller_usage_emails: row.traveller_usage_emails,
    top_up_url: row.top_up_url,
  };
}

export const getNotificationSettingsRoute = endpoint({
  method: "GET",
  url: "/profile/notifications",
  schema: {
    operationId: "getNotificationSettings",
    summary: "Which emails your travellers get from us",
    tags: ["Travellers"],
    security: PARTNER_SECURITY,
    response: {
      200: NotificationsResponse,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) =>
    renderSettings(await getNotificationSettings(ctx.db, request.partner!.partner_id)),
});

export const setNotificationSettingsRoute = endpoint({
  method: "PUT",
  url: "/profile/notifications",
  schema: {
    operationId: "setNotificationSettings",
    summary: "Turn traveller emails on or off",
    description:
      "Fields left out keep their value. A `top_up_url` that is not https is 400 `invalid_request` and nothing " +
      "is saved. A change is recorded in the audit log as `notifications.updated`.",
    tags: ["Travellers"],
    security: PARTNER_SECURITY,
    body: NotificationsBody,
    response: {
      200: NotificationsResponse,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
      ),
    },
  },
  handler: (ctx) => async (request) =>
    renderSettings(
      await setNotificationSettings(ctx.db, request.partner!.partner_id, request.body, actorOf(request)),
    ),
});
