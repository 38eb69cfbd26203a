// GET /v1/events/{event_id}: one of the partner's events of the last 30 days.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, NO_CONTROL_CHARACTERS, PARTNER_SECURITY } from "../shared/schemas.ts";
import { getEvent } from "./list-events.ts";
import { Event } from "./render-event.ts";

export const getEventRoute = endpoint({
  method: "GET",
  url: "/events/:event_id",
  schema: {
    operationId: "getEvent",
    summary: "One of your events",
    description: "Unknown, older than 30 days, or another partner's: 404 `event_not_found`.",
    tags: ["Webhooks"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      event_id: Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    }),
    response: {
      200: Event,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed", "event_not_found"),
    },
  },
  handler: (ctx) => async (request) => getEvent(ctx.db, request.partner!.partner_id, request.params.event_id),
});
