// GET /v1/orders/available-topups/{iccid} (spec 4.4): the top-ups offered for one of the partner's eSIMs.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, Money, PARTNER_SECURITY } from "../shared/schemas.ts";
import { ICCID_DESCRIPTION, ICCID_MAX_LENGTH } from "./iccid-param.ts";
import { listAvailableTopUps } from "./list-available-topups.ts";
import { MAX_TOPUP_ROWS } from "./topup-offer.ts";

export const TopUpRow = Type.Object(
  {
    package_id: Type.String({ description: "Send it unchanged to `POST /orders/submit-topup`." }),
    external_package_id: Type.String({ description: "The carrier's id; send it unchanged too." }),
    name: Type.String(),
    data_mb: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description:
        "Data added, in megabytes. null would mean unlimited; unlimited packages are not offered as top-ups.",
    }),
    validity_days: Type.Integer({ minimum: 1 }),
    wholesale_price: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "What the wallet is debited for this top-up.",
    }),
    coverage: Type.Enum(["country", "regional", "global"]),
    region: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, description: "A package that can top up this eSIM." },
);

const AvailableTopUps = Type.Object(
  {
    iccid: Type.String(),
    data: Type.Array(TopUpRow, {
      maxItems: MAX_TOPUP_ROWS,
      description:
        "Active, metered packages covering every destination of the eSIM's original package: country " +
        "packages, then regional, then global; within each by data size, validity and id.",
    }),
  },
  { additionalProperties: false },
);

export const listAvailableTopUpsRoute = endpoint({
  method: "GET",
  url: "/orders/available-topups/:iccid",
  schema: {
    operationId: "listAvailableTopUps",
    summary: "List the top-ups available for an eSIM",
    description:
      "The packages this eSIM can be topped up with: active packages with a data allowance that cover " +
      "every destination of the eSIM's original package (a France eSIM gets France, Europe and Global " +
      "packages; a Europe eSIM only Europe and Global). Submit one row with `POST /orders/submit-topup`.",
    tags: ["Top-ups"],
    security: PARTNER_SECURITY,
    params: Type.Object({
      iccid: Type.String({ maxLength: ICCID_MAX_LENGTH, description: ICCID_DESCRIPTION }),
    }),
    response: {
      200: AvailableTopUps,
      ...errorResponses("unauthorized", "wrong_environment", "invalid_iccid", "esim_not_found"),
    },
  },
  handler: (ctx) => async (request) =>
    listAvailableTopUps(ctx.db, request.partner!.partner_id, request.params.iccid),
});
