// What every console handler needs from a request: cookies, the form body, the session set by the
// area's hook, and the session cookie: HttpOnly, SameSite=Strict and, wherever the console is served
// over HTTPS, Secure with the `__Host-` prefix.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Static, TSchema } from "typebox";
import { Value } from "typebox/value";
import type { AppEnv, Config } from "../config.ts";
import type { ConsoleSession, SessionKind } from "../people/sessions.ts";
import { ApiError } from "../shared/errors.ts";

const COOKIE: Record<SessionKind, string> = {
  partner: "console_partner",
  operator: "console_operator",
};
const MAX_COOKIE_HEADER = 8_192;
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

const sessions = new WeakMap<FastifyRequest, ConsoleSession>();

/**
 * The cookie's value, or undefined when absent or sent more than once. Two of one name mean one was
 * planted beside ours (a sibling subdomain can set it for the parent domain with a longer Path, and
 * the browser sends that one first): taking either could serve the user under someone else's session.
 */
export function cookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== "string" || header.length > MAX_COOKIE_HEADER) return undefined;
  let value: string | undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at <= 0 || part.slice(0, at).trim() !== name) continue;
    if (value !== undefined) return undefined;
    value = part.slice(at + 1).trim();
  }
  return value;
}

/**
 * Secure always in production (a proxy may well call us `localhost`), elsewhere everywhere but a
 * browser on this machine over plain HTTP (local development and tests).
 */
export function secure(request: FastifyRequest, app_env: AppEnv): boolean {
  return app_env === "production" || !LOCAL_HOSTS.has(request.hostname.replace(/:\d+$/, ""));
}

/**
 * The session cookie's name for this request. Where it is Secure it carries the `__Host-` prefix
 * (RFC 6265bis 4.1.3.2): the browser then accepts it only from this very host, over HTTPS, for
 * Path=/ and without Domain, so a sibling subdomain cannot plant one for a user who has none yet
 * (cookie tossing, the half that refusing two cookies of one name does not close).
 */
export function sessionCookieName(request: FastifyRequest, app_env: AppEnv, kind: SessionKind): string {
  return secure(request, app_env) ? `__Host-${COOKIE[kind]}` : COOKIE[kind];
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  app_env: AppEnv,
  cookie: { kind: SessionKind; value: string; max_age_s: number },
): void {
  const hosted = secure(request, app_env);
  const attributes = [hosted ? "Path=/" : "Path=/console", "HttpOnly", "SameSite=Strict"];
  attributes.push(`Max-Age=${cookie.max_age_s}`);
  if (hosted) attributes.push("Secure");
  const name = sessionCookieName(request, app_env, cookie.kind);
  reply.header("set-cookie", `${name}=${cookie.value}; ${attributes.join("; ")}`);
}

export function clearSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  app_env: AppEnv,
  kind: SessionKind,
): void {
  setSessionCookie(request, reply, app_env, { kind, value: "", max_age_s: 0 });
}

export function rememberSession(request: FastifyRequest, session: ConsoleSession): void {
  sessions.set(request, session);
}

/** The session the area's hook found for this request, if it got that far (for error pages). */
export function knownSession(request: FastifyRequest): ConsoleSession | null {
  return sessions.get(request) ?? null;
}

/** The session the area's hook found: a handler behind the hook always has one. */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  const session = sessions.get(request);
  if (!session) throw new ApiError("internal_error", "console handler reached without a session");
  return session;
}

export function partnerOf(request: FastifyRequest): string {
  const partner_id = sessionOf(request).partner_id;
  if (partner_id === null) throw new ApiError("internal_error", "partner page without a partner session");
  return partner_id;
}

export type Form = Record<string, string>;

/** The url-encoded form body (parsed by the console's content-type parser), or an empty form. */
export function formOf(request: FastifyRequest): Form {
  const body = request.body;
  return body !== null && typeof body === "object" ? (body as Form) : {};
}

/** A query string's single value, or null. */
export function queryValue(request: FastifyRequest, name: string): string | null {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" && value.length > 0 ? value : null;
}

/**
 * The console's origin for what a browser checks against it (a passkey's relying party, the single
 * sign-on callback): in production its public address, PUBLIC_BASE_URL (https, checked by config.ts),
 * never the Host header, which whoever sends the request writes; in the sandbox, where the console
 * is also reached as localhost or at a test's port, the host this request came to.
 */
export function consoleOrigin(
  request: FastifyRequest,
  config: Pick<Config, "app_env" | "public_base_url">,
): string {
  if (config.app_env === "production") return new URL(config.public_base_url).origin;
  return `${request.protocol}://${request.host}`;
}

/**
 * A change must come from a page of this console: a browser says where a form came from
 * (Sec-Fetch-Site, Origin). Besides the CSRF token, and the only check before a session exists (sign-in).
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const site = request.headers["sec-fetch-site"];
  if (typeof site === "string" && site !== "same-origin") return false;
  const origin = request.headers.origin;
  if (typeof origin !== "string") return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** See Other: after a change, the browser loads the result with a GET (a reload repeats nothing). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header("location", location).send();
}

/** Checks a value against an API schema (TypeBox): the console accepts what the API accepts. */
export function checked<T extends TSchema>(schema: T, value: unknown): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const first = Value.Errors(schema, value)[0] as { instancePath?: string; message?: string } | undefined;
  const field = first?.instancePath?.replace(/^\//, "") || "form";
  throw new ApiError("invalid_request", `${field}: ${first?.message ?? "is not valid"}.`);
}
