// A query parameter a route does not read is refused: 400 invalid_request naming it, nothing done.
// Ignored, it meant the caller expected something of the route that it would not do
// (`POST /v1/orders/{id}/refund?amount_minor=100` refunded the whole order), as a body sent to a
// route that takes none did (endpoint.ts, refuseBody). One rule for every route of the app, the
// API's, the operator's, the service routes and the console's pages, so none can forget it: the
// names a route reads are its querystring schema's properties, or for a route without a schema
// (a console page reads its query itself) the names it lists with `readsQuery`; none otherwise.
import assert from "node:assert/strict";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import { ApiError } from "./errors.ts";

/** Unknown names listed in one refusal, and the characters kept of each (the URL is the caller's). */
const MAX_NAMES_LISTED = 20;
const MAX_NAME_CHARS = 64;

declare module "fastify" {
  interface FastifyContextConfig {
    /** The query parameters a route without a querystring schema reads (readsQuery). */
    query_names?: readonly string[];
  }
}

/** The route options of a route without a querystring schema that reads these query parameters. */
export function readsQuery(...names: string[]): { config: { query_names: readonly string[] } } {
  return { config: { query_names: names } };
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;
const REFUSERS = new WeakSet<Hook>();

/** The names a route reads: its schema's properties, which ajv checks too (no additional property). */
function knownNames(route: RouteOptions): ReadonlySet<string> {
  const schema = route.schema?.querystring as
    | { properties?: Record<string, unknown>; additionalProperties?: unknown }
    | undefined;
  if (schema === undefined) return new Set(route.config?.query_names ?? []);
  // A schema that allowed other names would contradict this rule; its route would never start.
  assert.equal(schema.additionalProperties, false, `${route.url}: a querystring schema closed to others`);
  assert.equal(route.config?.query_names, undefined, `${route.url}: a querystring schema or readsQuery`);
  return new Set(Object.keys(schema.properties ?? {}));
}

/** Refuses a request naming a query parameter outside `known`: before the body or the handler runs. */
function refuseUnknown(known: ReadonlySet<string>): Hook {
  const hook: Hook = (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    // The query parser makes an object for every request; most have no key at all.
    const unknown = query === undefined ? [] : Object.keys(query).filter((name) => !known.has(name));
    if (unknown.length === 0) {
      done();
      return;
    }
    const names = unknown.slice(0, MAX_NAMES_LISTED).map((name) => name.slice(0, MAX_NAME_CHARS));
    const errors = names.map((field) => ({
      field,
      code: "unknown_field" as const,
      message: "is not a known query parameter",
    }));
    const detail = `Unknown query parameter${names.length > 1 ? "s" : ""}: ${names.join(", ")}. Nothing was done.`;
    done(new ApiError("invalid_request", detail, { errors }));
  };
  REFUSERS.add(hook);
  return hook;
}

/**
 * Gives every route registered after this call (on this instance and its children) the check,
 * first among its own preValidation hooks: a refund or a remembered answer never runs before it.
 */
export function refuseUnknownQuery(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
    // Fastify copies a GET's options, hooks included, into the HEAD route it adds beside it.
    if (own.some((hook) => REFUSERS.has(hook as Hook))) return;
    route.preValidation = [refuseUnknown(knownNames(route)), ...own] as RouteOptions["preValidation"];
  });
}
