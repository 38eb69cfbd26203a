// The operator's API for a partner's people (issue 31): POST /admin/partners/{partner_id}/users
// invites one (201 User, `invited`; the link goes by email), GET lists them by pages.
import { type Static, Type } from "typebox";
import { findPartner } from "../partners/list-partners.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { actorOf } from "../shared/http-types.ts";
import {
  ADMIN_ERRORS,
  ADMIN_SECURITY,
  errorResponses,
  NO_CONTROL_CHARACTERS,
  PrefixedId,
  pageParameters,
  pageSize,
} from "../shared/schemas.ts";
import { inviteUser } from "./invite-user.ts";
import { PARTNER_ROLES } from "./roles.ts";
import { listUsers, MAX_TEAM_PAGE, renderUser } from "./users.ts";

const DEFAULT_PAGE_SIZE = 20;

export const UserSchema = Type.Object(
  {
    user_id: Type.String({ description: "`usr_…`" }),
    email: Type.String(),
    name: Type.String({ description: "Empty until the person accepts the invitation." }),
    role: Type.String({ description: "owner, admin, developer, support, finance or viewer" }),
    status: Type.Union([Type.Literal("invited"), Type.Literal("active"), Type.Literal("disabled")]),
    created_at: Type.String({ format: "date-time" }),
    last_sign_in_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    two_factor: Type.Union([Type.Literal("none"), Type.Literal("totp"), Type.Literal("passkey")]),
  },
  { additionalProperties: false },
);

const InviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254, pattern: NO_CONTROL_CHARACTERS }),
    role: Type.Union(PARTNER_ROLES.map((role) => Type.Literal(role))),
  },
  { additionalProperties: false },
);

const UserPage = Type.Object(
  {
    data: Type.Array(UserSchema),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);
export type UserPage = Static<typeof UserPage>;

export const inviteUserRoute = endpoint({
  method: "POST",
  url: "/partners/:partner_id/users",
  schema: {
    operationId: "adminInviteUser",
    summary: "Invite a person to a partner's team",
    description:
      "The person is added `invited` and receives an email with a one-time link (valid 72 hours) to " +
      "choose a password. An email that is already a person of the partners' realm is 409 `user_exists`. " +
      "When the email cannot be sent, nobody is invited (503 `service_unavailable`): invite again.",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    body: InviteBody,
    response: {
      201: UserSchema,
      ...errorResponses(
        ...ADMIN_ERRORS,
        "invalid_request",
        "partner_not_found",
        "user_exists",
        "service_unavailable",
      ),
    },
  },
  handler: (ctx) => async (request, reply) => {
    const { user } = await inviteUser(ctx.db, ctx.config, {
      realm: "partner",
      partner_id: request.params.partner_id,
      email: request.body.email,
      role: request.body.role,
      actor: actorOf(request),
    });
    return reply.code(201).send(renderUser(user));
  },
});

export const listUsersRoute = endpoint({
  method: "GET",
  url: "/partners/:partner_id/users",
  schema: {
    operationId: "adminListUsers",
    summary: "A partner's people, oldest first",
    tags: ["Operator"],
    security: ADMIN_SECURITY,
    params: Type.Object({ partner_id: PrefixedId("ptr") }),
    querystring: Type.Object({ ...pageParameters(DEFAULT_PAGE_SIZE) }, { additionalProperties: false }),
    response: { 200: UserPage, ...errorResponses(...ADMIN_ERRORS, "invalid_request", "partner_not_found") },
  },
  handler: (ctx) => async (request) => {
    if (!(await findPartner(ctx.db, request.params.partner_id)))
      throw new ApiError("partner_not_found", `No partner ${request.params.partner_id}.`);
    const page = await listUsers(ctx.db, {
      realm: "partner",
      partner_id: request.params.partner_id,
      limit: Math.min(pageSize(request.query.limit, DEFAULT_PAGE_SIZE), MAX_TEAM_PAGE),
      cursor: request.query.cursor ?? null,
    });
    return { ...page, data: page.data.map(renderUser) };
  },
});
