// One endpoint, defined in its own file (Unkey's createRoute shape): its method, URL, request and
// response schemas, and its handler, made from the application context when it is registered.
// A domain's routes.ts lists its endpoints; the server registers each list under its prefix.
// The schema types the handler's request through the TypeBox provider, as an inline route would.
import assert from "node:assert/strict";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from "fastify";
import type { AppContext } from "./context.ts";
import { ApiError } from "./errors.ts";
import type { App } from "./http-types.ts";
import { type JsonBodyParser, strictJsonParser } from "./well-formed-text.ts";

export type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider,
  FastifyBaseLogger
>;

/**
 * An answer already sent, byte for byte: what a retry with the same body gets again. `headers`
 * are sent beside it (`Idempotent-Replayed`), not part of what was stored.
 */
export type ExactAnswer = {
  status: number;
  content_type: string;
  body: string;
  headers?: Readonly<Record<string, string>>;
};

/** Sends an ExactAnswer as it is: a string with its type set is not serialised again. */
export function sendExact(reply: FastifyReply, answer: ExactAnswer): FastifyReply {
  if (answer.headers !== undefined) reply.headers(answer.headers);
  return reply.code(answer.status).type(answer.content_type).send(answer.body);
}

/**
 * A remembered answer for a request whose JSON body is exactly `bytes`, or null. Only an answer
 * that is final and was given to a request with these same bytes (so they parsed and validated,
 * and would again: parsing and validation depend on nothing else) may be found here.
 */
export type BytesLookup = (request: FastifyRequest, bytes: Buffer) => ExactAnswer | null;

/** A handler, and the lookup of a route that answers some retries from their body's bytes. */
export type AnsweringFromBytes<S extends FastifySchema> = { handler: Handler<S>; from_bytes: BytesLookup };

export type Endpoint<S extends FastifySchema = FastifySchema> = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  schema: S;
  /**
   * Called once per registration: state kept across requests (a cache) lives in its closure. A
   * route that answers retries from memory may return `from_bytes` too, looked up before the body
   * is parsed or validated (the handler finds the exact bytes in `request.bodyBytes`). On such a
   * route the body is parsed in its own preValidation hook, after the app's: a request with both
   * a bad path or query and a bad body gets the parameter's refusal, and an app-wide
   * preValidation hook sees no body yet.
   */
  handler: (ctx: AppContext) => Handler<S> | AnsweringFromBytes<S>;
  /**
   * Set on a route without a body schema whose handler reads and judges the body itself (an
   * SM-DP+'s notification). Any other such route refuses a body (refuseBody).
   */
  own_body?: true;
};

type RouteHandler = Parameters<App["route"]>[0]["handler"];

/** A defined endpoint, ready to register: its types are checked where it is defined. */
export type DefinedEndpoint = {
  method: Endpoint["method"];
  url: string;
  register(app: App, ctx: AppContext): void;
};

/** Checks the handler against its own schema, and keeps how to register it. */
export function endpoint<S extends FastifySchema>(definition: Endpoint<S>): Endpoint<S> & DefinedEndpoint {
  return {
    ...definition,
    register(app, ctx) {
      const { method, url, schema } = definition;
      const made = definition.handler(ctx);
      // A route answering from bytes reads a body by definition: it must declare its schema.
      if (typeof made !== "function") assert.ok(schema.body !== undefined, `${url}: a body schema`);
      if (typeof made === "function") {
        const takes_no_body = method !== "GET" && schema.body === undefined && definition.own_body !== true;
        const body_optional = (schema as { [OPTIONAL_BODY]?: boolean })[OPTIONAL_BODY] === true;
        app.route({
          method,
          url,
          schema,
          handler: made as unknown as RouteHandler,
          ...(takes_no_body
            ? { preValidation: refuseBody }
            : body_optional
              ? { preValidation: noBodyAsEmpty }
              : {}),
        });
        return;
      }
      app.route({
        method,
        url,
        schema,
        handler: made.handler as unknown as RouteHandler,
        // A flag on the request, not the route's config: Fastify builds routeOptions on every read.
        onRequest: wantsBytes,
        preValidation: answerFromBytes(strictJsonParser(app), made.from_bytes),
      });
    },
  };
}

/**
 * Set to true in a route's schema whose body may be left out (every field of it optional): no
 * body, or JSON null, is validated and handled as `{}`, and the OpenAPI document says the body is
 * not required (service-routes.ts).
 */
export const OPTIONAL_BODY = "x-body-optional";

function noBodyAsEmpty(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
}

/**
 * A route that takes no body answers one with 400 and does nothing: a body sent to it means the
 * partner expects something of it (`{"amount_minor": 100}` on a refund: a partial refund) that
 * it would not do. None, JSON `null`, or an empty JSON object (what many clients send by default)
 * is fine.
 */
function refuseBody(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const body: unknown = request.body;
  const is_object = typeof body === "object" && body !== null && !Array.isArray(body);
  if (body === undefined || body === null || (is_object && Object.keys(body).length === 0)) {
    done();
    return;
  }
  const errors = is_object
    ? Object.keys(body)
        .slice(0, 20)
        .map((field) => ({
          field: field.slice(0, 64),
          code: "unknown_field" as const,
          message: "is not a known field",
        }))
    : [{ field: "body", code: "not_allowed" as const, message: "must be empty: this request takes no body" }];
  done(new ApiError("invalid_request", "This request takes no body: send none (or {}).", { errors }));
}

/** Tells the JSON parser to hand this request's body over unparsed (well-formed-text.ts). */
function wantsBytes(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  request.wantsBodyBytes = true;
  done();
}

/**
 * The route hook of a route that answers from bytes: its body arrives unparsed (well-formed-text.ts).
 * A remembered answer is sent as it is: no parse, no schema, no handler. Otherwise the bytes are
 * parsed as every JSON body is, kept for the handler, and validation and the handler run as usual.
 */
function answerFromBytes(parse: JsonBodyParser, lookup: BytesLookup) {
  // A callback hook: a remembered answer goes through no promise.
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const bytes = request.bodyBytes;
    // No JSON body (none, or another content type): validation answers as on any route.
    if (bytes === null) {
      done();
      return;
    }
    const answer = lookup(request, bytes);
    if (answer !== null) {
      // Sent from a hook: done is not called, so nothing after this hook runs.
      sendExact(reply, answer);
      return;
    }
    parse(request, bytes, (error, value) => {
      if (error) {
        // As Fastify does when its parser refuses a body (content-type-parser.js).
        reply.header("connection", "close");
        done(error);
        return;
      }
      request.body = value;
      done();
    });
  };
}

/** Registers a domain's endpoints in the order listed: the order of the OpenAPI document. */
export function routesOf(endpoints: readonly DefinedEndpoint[]) {
  return async (app: App, ctx: AppContext): Promise<void> => {
    for (const route of endpoints) route.register(app, ctx);
  };
}
