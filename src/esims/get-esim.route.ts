// GET /v1/esims/{iccid}: one of the partner's eSIMs, its state, usage, bundles and install kit.
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { getEsim } from "./get-esim.ts";
import { IccidParams } from "./iccid-param.ts";
import { Esim } from "./render-esim.ts";

export const getEsimRoute = endpoint({
  method: "GET",
  url: "/esims/:iccid",
  schema: {
    operationId: "getEsim",
    summary: "One of your eSIMs",
    description:
      "Its status, usage (`usage.updated_at` says how fresh), bundles (the original first, then top-ups) " +
      "and everything needed to install it: the LPA string, the iOS and Android install links, the QR image.",
    tags: ["eSIMs"],
    security: PARTNER_SECURITY,
    params: IccidParams,
    response: {
      200: Esim,
      ...errorResponses("unauthorized", "wrong_environment", "invalid_iccid", "esim_not_found"),
    },
  },
  handler: (ctx) => async (request) => getEsim(ctx.db, request.partner!.partner_id, request.params.iccid),
});
