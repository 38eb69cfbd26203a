// PATCH /admin/partners/{partner_id}: rename, suspend (with the reason its console shows), reactivate.
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  MAX_REASON_LENGTH,
  OneLineText,
  PrefixedId,
  ReasonText,
} from "../shared/schemas.ts";
import { AdminPartner, renderAdminPartner } from "./admin-partner.ts";
import { MAX_PARTNER_NAME_LENGTH, patchPartner } from "./update-partner.ts";

export const UpdatePartnerBody = Type.Object(
  {
    name: Type.Optional(
      OneLineText(
        `The new name, trimmed: 1 to ${MAX_PARTNER_NAME_LENGTH} characters.`,
        MAX_PARTNER_NAME_LENGTH,
      ),
    ),
    status: Type.Optional(
      Type.Union([Type.Literal("active"), Type.Literal("suspended")], {
        description:
          "`suspended`: every write of the partner's keys and console people answers 403 `partner_suspended` " +
          "but those that only take access away (deleting a webhook endpoint; in the console also revoking a key " +
          "and disabling a person); reads still work; orders already pending still finish. `active` reactivates it.",
      }),
    ),
    reason: Type.Optional(
      ReasonText(
        "Why: required to suspend (the partner's console shows it), optional to reactivate; goes with `status`. " +
          `Suspending a suspended partner with a new reason replaces the reason. One line, 1 to ${MAX_REASON_LENGTH} characters once trimmed.`,
      ),
    ),
  },
  { additionalProperties: false },
);

export const updatePartnerRoute = endpoint({
  method: "PATCH",
  url: "/partners/:partner_id",
  schema: {
    operationId: "adminUpdatePartner",
    summary: "Rename, suspend or reactivate a partner",
    description:
      "`reason` is required with `status: suspended` (without it: 400 `invalid_request`, nothing changed); the " +
      "schema lists it as optional only because a rename or a reactivation may go without one. " +
      "Audited (`partner.updated`, `partner.suspended`, `partner.reactivated`) with the reason; a PATCH that changes " +
      "nothing answers the partner as it is and writes no audit entry.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: UpdatePartnerBody,
    response: {
      200: AdminPartner,
      ...errorResponses(...ADMIN_ERRORS, "invalid_request", "partner_not_found"),
    },
  },
  handler: (ctx) => async (request) => {
    const partner = await patchPartner(ctx.db, request.params.partner_id, request.body, actorOf(request));
    return renderAdminPartner(ctx.db, partner);
  },
});
