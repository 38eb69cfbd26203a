// The writes a suspended partner may still make (issue 32): those that only take access away.
// Suspension is when a compromise is most likely, so a partner must still be able to revoke a key,
// disable a person and stop its traveller data flowing to a webhook endpoint. Every other write of
// its keys and console people answers 403 partner_suspended. One list for the API (server/auth.ts,
// through key-restrictions.ts) and the console (console/routes.ts), keyed by method and route as
// registered; README's "Suspending a partner" names the same routes.

/** True: the route only removes access. A function: the form decides (read after its body is). */
export type SuspensionExemption = true | ((form: Readonly<Record<string, string>>) => boolean);

const REMOVES_ACCESS: Readonly<Record<string, SuspensionExemption>> = {
  "DELETE /v1/webhook-endpoints/:endpoint_id": true,
  "POST /console/keys/:key_id/revoke": true,
  "POST /console/webhooks/:endpoint_id/delete": true,
  // Disabling a person, never enabling one: the direction is in the form, so the console checks it
  // once the body is read (after the CSRF check), not in the hook that runs before.
  "POST /console/team/:user_id/status": (form) => form.status === "disabled",
};

/** The route's exemption, or undefined: the write is refused while the partner is suspended. */
export function suspensionExemption(
  method: string,
  url: string | undefined,
): SuspensionExemption | undefined {
  return url === undefined ? undefined : REMOVES_ACCESS[`${method} ${url}`];
}

/** Every exempt route, for the tests and the OpenAPI check. */
export function suspensionExemptRoutes(): string[] {
  return Object.keys(REMOVES_ACCESS);
}
