// Who made a change (issue 31's audit log): a person, an API key, the operator's ADMIN_TOKEN, or
// the service itself (the resolver, a sweep). Routes and console pages build it from the request;
// use cases carry it to the audit entry written in their transaction.

export type ActorType = "user" | "api_key" | "operator" | "system";

export type Actor = {
  type: ActorType;
  /** usr_… for a person, key_… for an API key, "admin_token" for the operator token, null for the system. */
  id: string | null;
  email?: string | null;
  /** The client's address as the server sees it (TRUSTED_PROXIES applied); null for the system. */
  ip: string | null;
};

export const SYSTEM_ACTOR: Actor = { type: "system", id: null, ip: null };

export function apiKeyActor(key_id: string, ip: string): Actor {
  return { type: "api_key", id: key_id, ip };
}

export function adminTokenActor(ip: string): Actor {
  return { type: "operator", id: "admin_token", ip };
}

/** The operator's command line (`npm run cli`): a person at the server, with no address. */
export const CLI_ACTOR: Actor = { type: "operator", id: "cli", ip: null };
