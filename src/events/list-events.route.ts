// GET /v1/events: the partner's events of the last 30 days, newest first, by pages.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageParameters, pageSize } from "../shared/schemas.ts";
import { DEFAULT_PAGE_SIZE, EventPage, listEvents } from "./list-events.ts";
import { EventTypeSchema } from "./render-event.ts";

export const listEventsRoute = endpoint({
  method: "GET",
  url: "/events",
  schema: {
    operationId: "listEvents",
    summary: "Your events of the last 30 days, newest first",
    description:
      "Every event is recorded whether or not you have a webhook endpoint: a receiver that was down can " +
      "catch up here. Filter by `type`. Pages stay stable while new events are recorded. Older events are " +
      "deleted, with their deliveries.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      { type: Type.Optional(EventTypeSchema), ...pageParameters(DEFAULT_PAGE_SIZE) },
      { additionalProperties: false },
    ),
    response: { 200: EventPage, ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed") },
  },
  handler: (ctx) => async (request) =>
    listEvents(ctx.db, {
      partner_id: request.partner!.partner_id,
      type: request.query.type ?? null,
      limit: pageSize(request.query.limit, DEFAULT_PAGE_SIZE),
      cursor: request.query.cursor ?? null,
    }),
});
