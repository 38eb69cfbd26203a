// POST /v1/sandbox/esims/{iccid}/simulate: sandbox only (production: 404 not_found).
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { IccidParams } from "./iccid-param.ts";
import { Esim } from "./render-esim.ts";
import { simulateEsimEvent } from "./simulate-esim.ts";

const SimulateBody = Type.Object(
  {
    event: Type.Union(
      [Type.Literal("install"), Type.Literal("use_data"), Type.Literal("expire"), Type.Literal("delete")],
      {
        description:
          "`install`: the profile is downloaded to a device. `use_data`: the device uses `data_mb` (the first " +
          "use activates the first bundle). `expire`: every bundle ends now. `delete`: the profile is removed.",
      },
    ),
    data_mb: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000_000,
        description: "Megabytes used; required for `use_data`.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const simulateEsimRoute = endpoint({
  method: "POST",
  url: "/sandbox/esims/:iccid/simulate",
  schema: {
    operationId: "simulateEsimEvent",
    summary: "Sandbox: make something happen to an eSIM",
    description:
      "Sandbox only (production: 404 `not_found`). The carrier simulator makes the event happen and signals it " +
      "exactly as a real carrier would; the answer is the eSIM after the signal was applied, events included.",
    tags: ["eSIMs"],
    security: PARTNER_SECURITY,
    params: IccidParams,
    body: SimulateBody,
    response: {
      200: Esim,
      ...errorResponses(
        "invalid_iccid",
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "not_found",
        "esim_not_found",
        "carrier_error",
        "carrier_unavailable",
      ),
    },
  },
  handler: (ctx) => async (request, reply) =>
    reply.send(await simulateEsimEvent(ctx, request.partner!.partner_id, request.params.iccid, request.body)),
});
