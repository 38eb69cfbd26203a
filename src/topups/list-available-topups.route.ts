// GET /v1/orders/available-topups/{iccid} (spec 4.4): the top-ups offered for one of the partner's eSIMs.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { ICCID_DESCRIPTION, ICCID_MAX_LENGTH } from "./iccid-param.ts";
import { AvailableTopUps, listAvailableTopUps } from "./list-available-topups.ts";

export const listAvailableTopUpsRoute = endpoint({
  method: "GET",
  url: "/orders/available-topups/:iccid",
  schema: {
    operationId: "listAvailableTopUps",
    summary: "List the top-ups available for an eSIM",
    description:
      "The packages this eSIM can be topped up with: active packages with a data allowance that cover " +
      "every destination of the eSIM's original package (a France eSIM gets France, Europe and Global " +
      "packages; a Europe eSIM only Europe and Global), of the network that made the eSIM (another " +
      "network's package cannot be loaded onto it: 422 `topup_not_available`). Submit one row with " +
      "`POST /orders/submit-topup`. " +
      "A `deleted` eSIM (its profile removed from the device) or a `cancelled` one (refunded) is offered " +
      "nothing: `data` is empty.",
    tags: ["Top-ups"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      iccid: Type.String({ maxLength: ICCID_MAX_LENGTH, description: ICCID_DESCRIPTION }),
    }),
    response: {
      200: AvailableTopUps,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "ip_not_allowed",
        "invalid_iccid",
        "esim_not_found",
      ),
    },
  },
  handler: (ctx) => async (request) =>
    listAvailableTopUps(ctx.db, request.partner!.partner_id, request.params.iccid),
});
