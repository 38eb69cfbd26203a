// GET /v1/compatible-devices: the eSIM-capable devices, searchable by brand or model.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  CompatibleDevicesResponse,
  DEFAULT_DEVICES_LIMIT,
  listCompatibleDevices,
  MAX_DEVICE_QUERY_CHARS,
  MAX_DEVICES_LIMIT,
} from "./compatible-devices.ts";

export const listCompatibleDevicesRoute = endpoint({
  method: "GET",
  url: "/compatible-devices",
  schema: {
    operationId: "listCompatibleDevices",
    summary: "List the devices that take an eSIM",
    description:
      "The phones, tablets, watches and laptops known to take an eSIM, by brand and model, with their OS: the " +
      "list shipped with the service (from the manufacturers' public lists) or the operator's own. " +
      "`q` keeps the devices whose brand or model contains it (any case; `pixel 8`, `galaxy z`, " +
      "`apple iphone 15`). Regional variants differ: check a traveller's device settings for an eSIM " +
      "option. Without `limit`, the whole list (an import holds at most " +
      `${MAX_DEVICES_LIMIT} devices); \`limit\` narrows it to the first ones.`,
    tags: ["Catalog"],
    security: PARTNER_SECURITY,
    querystring: Type.Object(
      {
        q: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: MAX_DEVICE_QUERY_CHARS,
            description: "Part of a brand or model, any case.",
          }),
        ),
        limit: Type.Optional(
          Type.String({
            // 1-5000 (MAX_DEVICES_LIMIT), written as digits: query strings are text, never coerced.
            pattern: "^(5000|[1-4][0-9]{3}|[1-9][0-9]{0,2})$",
            description: `1-${MAX_DEVICES_LIMIT}; absent: the whole list.`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    response: {
      200: CompatibleDevicesResponse,
      ...errorResponses("invalid_request", "unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) =>
    listCompatibleDevices(ctx.db, {
      q: request.query.q?.trim() || null,
      limit: request.query.limit === undefined ? DEFAULT_DEVICES_LIMIT : Number(request.query.limit),
    }),
});
