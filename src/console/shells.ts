// The page shell of a signed-in user: the nav, the CSRF token for its forms, and who is signed in.
import type { FastifyRequest } from "fastify";
import { findPartner } from "../partners/list-partners.ts";
import { can, type OperatorPermission, type PartnerPermission } from "../people/roles.ts";
import { csrfToken } from "../people/sessions.ts";
import type { AppContext } from "../shared/context.ts";
import type { Shell } from "./layout.ts";
import { partnerOf, sessionOf } from "./request.ts";

export async function partnerShell(
  request: FastifyRequest,
  ctx: AppContext,
  current: string,
): Promise<Shell> {
  const session = sessionOf(request);
  const partner = await findPartner(ctx.db, partnerOf(request));
  return {
    area: "partner",
    current,
    signed_in: {
      csrf: csrfToken(session.session_id),
      role: session.role,
      who: `${partner?.name ?? ""} · ${session.email} (${session.role})`,
      sandbox: ctx.config.app_env === "sandbox",
    },
    ...(partner?.status === "suspended" && partner.suspended_at !== null
      ? { suspended: { reason: partner.suspended_reason ?? "", since: partner.suspended_at } }
      : {}),
  };
}

export function operatorShell(request: FastifyRequest, ctx: AppContext, current: string): Shell {
  return {
    area: "operator",
    current,
    signed_in: {
      csrf: csrfToken(sessionOf(request).session_id),
      role: sessionOf(request).role,
      who: `Operator · ${sessionOf(request).email} (${sessionOf(request).role})`,
      sandbox: ctx.config.app_env === "sandbox",
    },
  };
}

/** Whether the signed-in person's role holds this permission: pages hide the forms it does not. */
export function allows(request: FastifyRequest, permission: PartnerPermission | OperatorPermission): boolean {
  const session = sessionOf(request);
  return can(session.kind, session.role, permission);
}
