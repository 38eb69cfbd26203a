// The people of a team (issue 31): the partner's Team page (/console/team) and the operator's
// People page (/console/admin/people), and the people panel of the operator's partner page. Each
// lists the team; people who may (team.write / people.write) invite, change roles, disable and
// enable; only an owner touches owners (team.owners) and requires a second factor of the team.
import type { FastifyRequest } from "fastify";
import { requiresTwoFactor, setRequiresTwoFactor } from "../partners/two-factor-policy.ts";
import { AddressOfAnotherTeam, inviteUser } from "../people/invite-user.ts";
import { changeRole, setUserStatus, type TeamChange } from "../people/manage-team.ts";
import { OPERATOR_ROLES, PARTNER_ROLES, type Realm } from "../people/roles.ts";
import { listUsers, MAX_TEAM_PAGE, renderUser, type User } from "../people/users.ts";
import type { Actor } from "../shared/actor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { readsQuery } from "../shared/query-names.ts";
import { formatInstant, statusPill } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, notice, page, scrollTable } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { formOf, partnerOf, queryValue, seeOther, sessionOf } from "./request.ts";
import { allows, operatorShell, partnerShell } from "./shells.ts";

const DONE: Record<string, string> = {
  invited:
    "The invitation is sent, unless the address already has an account with another team (ask the operator): its link works once, for 72 hours.",
  role: "The role is changed; that person's sessions have ended.",
  disabled: "The person is disabled and signed out everywhere.",
  active: "The person is enabled again.",
  required: "A second factor is now required of everyone in the team.",
  optional: "A second factor is no longer required of the team.",
};

type TeamView = {
  realm: Realm;
  /** Where the team's forms post: /console/team, /console/admin/people or a partner's page. */
  base: string;
  csrf: string;
  may_change: boolean;
  may_change_owners: boolean;
  /** The signed-in person: their own row offers no disable (they would lock themselves out). */
  self: string | null;
};

/** `label`: an aria-label, for a picker in a table row whose column header names it to the eye. */
function roleSelect(view: TeamView, id: string, current: string | null, label?: string): Html {
  const roles = (view.realm === "partner" ? PARTNER_ROLES : OPERATOR_ROLES).filter(
    (role) => role !== "owner" || view.may_change_owners,
  );
  return html`<select id="${id}" name="role"${label ? html` aria-label="${label}"` : ""}>${roles.map(
    (role) => html`<option value="${role}"${role === current ? html` selected` : ""}>${role}</option>`,
  )}</select>`;
}

function actions(view: TeamView, user: User): Html {
  if (!view.may_change || (user.role === "owner" && !view.may_change_owners)) return html``;
  const id = `role-${user.user_id}`;
  const role = html`<form method="post" action="${view.base}/${user.user_id}/role" class="inline">${csrfField(view.csrf)}
    ${roleSelect(view, id, user.role, `Role of ${user.email}`)}
    <button type="submit" class="quiet">Change role</button></form>`;
  const next = user.status === "disabled" ? "active" : "disabled";
  const status =
    user.status === "invited" || user.user_id === view.self
      ? html``
      : html`<form method="post" action="${view.base}/${user.user_id}/status" class="inline">${csrfField(view.csrf)}
    <input type="hidden" name="status" value="${next}">
    <button type="submit" class="${next === "disabled" ? "danger" : "quiet"}" aria-label="${next === "disabled" ? "Disable" : "Enable"} ${user.email}">${next === "disabled" ? "Disable" : "Enable"}</button></form>`;
  return html`${role} ${status}`;
}

export function peopleTable(view: TeamView, people: readonly User[]): Html {
  if (people.length === 0) return html`<div class="panel"><p>No people yet.</p></div>`;
  return scrollTable(
    "People",
    html`<table><thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th>
      <th scope="col">Status</th><th scope="col">Second factor</th><th scope="col">Last sign-in</th>
      <th scope="col"><span class="hint">Actions</span></th></tr></thead>
      <tbody>${people.map(
        (
          u,
        ) => html`<tr data-user="${u.user_id}"><td>${u.email}</td><td>${u.name || "—"}</td><td>${u.role}</td>
          <td>${statusPill(u.status)}</td><td>${u.two_factor === "none" ? "—" : u.two_factor}</td>
          <td>${formatInstant(u.last_sign_in_at)}</td><td class="row-actions">${actions(view, u)}</td></tr>`,
      )}</tbody></table>`,
  );
}

export function inviteForm(view: TeamView, action: string): Html {
  if (!view.may_change) return html``;
  return html`<h2>Invite someone</h2><form method="post" action="${action}" class="panel">${csrfField(view.csrf)}
    <div class="fields"><div><label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" required maxlength="254"></div>
    <div><label for="invite-role">Role</label>${roleSelect(view, "invite-role", "viewer")}</div>
    <div class="submit"><button type="submit">Send invitation</button></div></div></form>`;
}

function doneNotice(request: FastifyRequest): Html {
  const done = DONE[queryValue(request, "done") ?? ""];
  return done ? notice("ok", done) : html``;
}

function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new ApiError("internal_error", "console change without an actor");
  return request.actor;
}

function userIdOf(request: FastifyRequest): string {
  return (request.params as { user_id: string }).user_id;
}

function statusOf(request: FastifyRequest): "active" | "disabled" {
  const status = formOf(request).status;
  if (status !== "active" && status !== "disabled")
    throw new ApiError("invalid_request", "status: must be active or disabled.");
  return status;
}

async function teamOf(ctx: AppContext, realm: Realm, partner_id: string | null): Promise<User[]> {
  const page = await listUsers(ctx.db, { realm, partner_id, limit: MAX_TEAM_PAGE, cursor: null });
  return page.data.map(renderUser);
}

async function teamPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const partner_id = partnerOf(request);
  const shell = await partnerShell(request, ctx, "/console/team");
  const view: TeamView = {
    realm: "partner",
    base: "/console/team",
    csrf: shell.signed_in!.csrf,
    may_change: allows(request, "team.write"),
    may_change_owners: allows(request, "team.owners"),
    self: sessionOf(request).user_id,
  };
  const [people, required] = await Promise.all([
    teamOf(ctx, "partner", partner_id),
    requiresTwoFactor(ctx.db, partner_id),
  ]);
  const security = html`<h2>Sign-in</h2><div class="panel">
    <p>A second factor (an authenticator app or a passkey) is ${required ? html`<strong>required</strong>` : "optional"} for this team.</p>
    <form method="post" action="/console/team/two-factor" class="inline">${csrfField(view.csrf)}
      <input type="hidden" name="required" value="${required ? "false" : "true"}">
      <button type="submit" class="quiet">${required ? "Stop requiring a second factor" : "Require a second factor for the team"}</button></form>
    ${allows(request, "security.write") ? html`<p><a href="/console/team/sso">Single sign-on (OpenID Connect) settings</a></p>` : ""}</div>`;
  const body = html`${doneNotice(request)}${peopleTable(view, people)}
    <p class="hint">The first ${MAX_TEAM_PAGE} people. Changing someone's role or disabling them signs them out at once.</p>
    ${inviteForm(view, "/console/team/invitations")}${security}`;
  return page("Team", shell, body);
}

function partnerChange(request: FastifyRequest): TeamChange {
  return {
    realm: "partner",
    partner_id: partnerOf(request),
    user_id: userIdOf(request),
    actor: actorOf(request),
    may_change_owners: allows(request, "team.owners"),
  };
}

export const partnerTeamPages: ConsolePages = (scope, ctx) => {
  scope.get("/team", readsQuery("done"), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await teamPage(request, ctx)),
  );
  scope.post("/team/invitations", async (request, reply) => {
    const form = formOf(request);
    const role = form.role ?? "";
    if (role === "owner" && !allows(request, "team.owners"))
      throw new ApiError("forbidden", "Only an owner may invite an owner.");
    try {
      await inviteUser(ctx.db, ctx.config, {
        realm: "partner",
        partner_id: partnerOf(request),
        email: form.email ?? "",
        role,
        actor: actorOf(request),
      });
    } catch (error) {
      // An address of another partner's person: answered as a sent invitation (nothing is sent), so
      // the Team page tells no partner who has an account with another.
      if (!(error instanceof AddressOfAnotherTeam)) throw error;
    }
    return seeOther(reply, "/console/team?done=invited");
  });
  scope.post("/team/:user_id/role", async (request, reply) => {
    await changeRole(ctx.db, { ...partnerChange(request), role: formOf(request).role ?? "" });
    return seeOther(reply, "/console/team?done=role");
  });
  scope.post("/team/:user_id/status", async (request, reply) => {
    const status = statusOf(request);
    await setUserStatus(ctx.db, { ...partnerChange(request), status });
    return seeOther(reply, `/console/team?done=${status}`);
  });
  scope.post("/team/two-factor", async (request, reply) => {
    const required = formOf(request).required === "true";
    const partner_id = partnerOf(request);
    await setRequiresTwoFactor(ctx.db, partner_id, required, actorOf(request));
    return seeOther(reply, `/console/team?done=${required ? "required" : "optional"}`);
  });
};

async function peoplePage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const shell = operatorShell(request, ctx, "/console/admin/people");
  const view: TeamView = {
    realm: "operator",
    base: "/console/admin/people",
    csrf: shell.signed_in!.csrf,
    may_change: allows(request, "people.write"),
    may_change_owners: true,
    self: sessionOf(request).user_id,
  };
  const people = await teamOf(ctx, "operator", null);
  const body = html`${doneNotice(request)}${peopleTable(view, people)}
    <p class="hint">The operator's staff (the first ${MAX_TEAM_PAGE}). A partner's people are on its page.</p>
    ${inviteForm(view, "/console/admin/people/invitations")}`;
  return page("People", shell, body);
}

/** The people panel of the operator's partner page: the partner's team and an invitation form. */
export async function partnerPeoplePanel(
  request: FastifyRequest,
  ctx: AppContext,
  partner_id: string,
  csrf: string,
): Promise<Html> {
  const view: TeamView = {
    realm: "partner",
    base: `/console/admin/partners/${partner_id}/users`,
    csrf,
    // The operator invites from here; roles and disabling are the partner's own Team page's.
    may_change: false,
    may_change_owners: true,
    self: null,
  };
  const people = await teamOf(ctx, "partner", partner_id);
  const invite = allows(request, "people.write")
    ? inviteForm({ ...view, may_change: true }, `/console/admin/partners/${partner_id}/users`)
    : html``;
  return html`<h2>People</h2>${peopleTable(view, people)}${invite}`;
}

function operatorChange(request: FastifyRequest): TeamChange {
  return {
    realm: "operator",
    partner_id: null,
    user_id: userIdOf(request),
    actor: actorOf(request),
    may_change_owners: true,
  };
}

export const operatorPeoplePages: ConsolePages = (scope, ctx) => {
  scope.get("/people", readsQuery("done"), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await peoplePage(request, ctx)),
  );
  scope.post("/people/invitations", async (request, reply) => {
    const form = formOf(request);
    await inviteUser(ctx.db, ctx.config, {
      realm: "operator",
      partner_id: null,
      email: form.email ?? "",
      role: form.role ?? "",
      actor: actorOf(request),
    });
    return seeOther(reply, "/console/admin/people?done=invited");
  });
  scope.post("/people/:user_id/role", async (request, reply) => {
    await changeRole(ctx.db, { ...operatorChange(request), role: formOf(request).role ?? "" });
    return seeOther(reply, "/console/admin/people?done=role");
  });
  scope.post("/people/:user_id/status", async (request, reply) => {
    const status = statusOf(request);
    await setUserStatus(ctx.db, { ...operatorChange(request), status });
    return seeOther(reply, `/console/admin/people?done=${status}`);
  });
  scope.post("/partners/:partner_id/users", async (request, reply) => {
    const { partner_id } = request.params as { partner_id: string };
    const form = formOf(request);
    await inviteUser(ctx.db, ctx.config, {
      realm: "partner",
      partner_id,
      email: form.email ?? "",
      role: form.role ?? "",
      actor: actorOf(request),
    });
    return seeOther(reply, `/console/admin/partners/${partner_id}?done=invited`);
  });
};
