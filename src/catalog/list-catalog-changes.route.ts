// GET /v1/catalog/changes: the changes to the packages this partner is offered, oldest first.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY, pageSize } from "../shared/schemas.ts";
import { CatalogChangePage, DEFAULT_PAGE_SIZE, listCatalogChanges } from "./list-catalog-changes.ts";

export const listCatalogChangesRoute = endpoint({
  method: "GET",
  url: "/catalog/changes",
  schema: {
    operationId: "listCatalogChanges",
    summary: "Changes to the packages you are offered, oldest first",
    description:
      "A package added, updated (its fields, destinations or your price) or removed, whether by the " +
      "operator's catalog import, a supplier sync or a change of your price list. Start without `since` " +
      "(the feed begins with every package offered when it began), then pass each answer's `next_cursor` " +
      "as `since`: at once while `has_more`, later to poll. `package` is the package as you see it when " +
      "you read the change (null once it is no longer offered). The same changes are the webhook events " +
      "`package.added`, `package.updated` and `package.removed`, sent to your endpoints that list them or " +
      "take every type (`event_types: []`). " +
      "A `since` this API did not return (another environment's included) is 400 `invalid_request`.",
    tags: ["Catalog"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      {
        since: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 200,
            description: "A `next_cursor` of an earlier answer. Absent: from the start of the feed.",
          }),
        ),
        limit: Type.Optional(
          Type.String({
            pattern: "^(100|[1-9][0-9]?)$",
            description: `1-100, default ${DEFAULT_PAGE_SIZE}.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: CatalogChangePage,
      ...errorResponses("invalid_request", "unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) =>
    listCatalogChanges(ctx.db, {
      app_env: ctx.config.app_env,
      partner_id: request.partner!.partner_id,
      since: request.query.since ?? null,
      limit: pageSize(request.query.limit, DEFAULT_PAGE_SIZE),
    }),
});
