// The one place where errors become responses: every failure leaves as application/problem+json.
import { randomUUID } from "node:crypto";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  databaseBusy,
  databaseUnreachable,
  isCancelledStatement,
  isConcurrencyAbort,
  isDatabaseBusy,
  isDatabaseUnreachable,
  isPoolTimeout,
} from "./database-busy.ts";
import { ApiError, ERROR_CODES, type ErrorCode, type FieldError, problemType } from "./errors.ts";
import { type AjvError, detailOf, fieldErrorsOf } from "./field-errors.ts";

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: FieldError[];
  order_id?: string;
  reason?: string;
};

export function problemBody(error: ApiError, request_id: string): ProblemBody {
  const body: ProblemBody = {
    type: problemType(error.code),
    title: ERROR_CODES[error.code].title,
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id,
  };
  if (error.errors) body.errors = error.errors;
  if (error.order_id) body.order_id = error.order_id;
  if (error.reason) body.reason = error.reason;
  return body;
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type("application/problem+json; charset=utf-8")
    .send(JSON.stringify(problemBody(error, String(reply.request.id))));
}

/** Maps anything thrown by a route, hook or Fastify itself to one of the closed set of codes. */
export function toApiError(error: FastifyError | Error): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseBusy(error)) return databaseBusy();
  if (isDatabaseUnreachable(error)) return databaseUnreachable();
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const context = fastifyError.validationContext ?? "body";
    const errors = fieldErrorsOf(fastifyError.validation as AjvError[], context);
    return new ApiError("invalid_request", detailOf(errors, context), { errors });
  }
  switch (fastifyError.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("payload_too_large", "The request body is larger than 65536 bytes.");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("unsupported_media_type", "Send the body as application/json.");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new ApiError("invalid_request", fastifyError.message);
  }
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return new ApiError("invalid_request", "The body is not valid JSON.");
  }
  if (fastifyError.statusCode === 415)
    return new ApiError("unsupported_media_type", "Send the body as application/json.");
  if (fastifyError.statusCode === 413) return new ApiError("payload_too_large");
  return new ApiError(
    "internal_error",
    "An unexpected error occurred. Quote the request_id when contacting support.",
  );
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.code === "internal_error") {
      // The only place internals go: the log, tied to the request id the partner was given.
      request.log.error({ err: error }, "unhandled error");
    } else if (isPoolTimeout(error)) {
      request.log.warn({ err: error }, "no database connection free in time (DB_POOL_MAX)");
    } else if (isConcurrencyAbort(error)) {
      // Answered 503, but a deadlock means two paths broke the lock order: worth an operator's look.
      request.log.error({ err: error }, "transaction aborted by a deadlock or serialization failure");
    } else if (isCancelledStatement(error)) {
      request.log.warn({ err: error }, "statement cancelled (statement_timeout or a lock wait timeout)");
    } else if (isDatabaseUnreachable(error)) {
      request.log.warn({ err: error }, "database unreachable (a restart or failover?): answered 503");
    }
    return sendProblem(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]?.slice(0, 200)}.`),
    ),
  );
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route runs (a malformed
 * percent-encoding, a path parameter longer than maxParamLength). Its default answer is plain
 * JSON with a Fastify code; ours is the problem+json 400 every route documents.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const detail =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? "A path parameter is longer than this API accepts."
      : "The URL is not valid: it has a malformed percent-encoding.";
  // No route context here, so the onSend hook that sets X-Request-Id may not run: set it now.
  reply.header("x-request-id", String(request.id));
  return sendProblem(reply, new ApiError("invalid_request", detail));
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (not HTTP/1.1, an invalid header,
 * headers over the size limit, a request too slow to arrive). There is no request yet, only the
 * socket: write a problem+json 400 with a fresh request id, as every other error has, and close.
 */
export function writeClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const detail =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "The request headers are larger than this server accepts."
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "The request did not arrive in time."
        : "The request is not valid HTTP/1.1.";
  const request_id = randomUUID();
  const body = JSON.stringify(problemBody(new ApiError("invalid_request", detail), request_id));
  if (socket.writable) {
    socket.write(
      "HTTP/1.1 400 Bad Request\r\n" +
        "content-type: application/problem+json; charset=utf-8\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${request_id}\r\n` +
        "connection: close\r\n\r\n" +
        body,
    );
  }
  socket.destroy();
}
