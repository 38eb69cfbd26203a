// Text the service stores must be the text the client sent. JSON can escape a lone UTF-16
// surrogate ("\ud800"), a body can carry bytes that are not UTF-8, and a query can percent-encode
// either; each would reach PostgreSQL as U+FFFD, a silent change of the client's data (a name, a
// reference it later filters by). Refused here, once, for every body, query and path parameter:
// 400 invalid_request naming where, before any schema or route sees the value. A route that
// answers from bytes (endpoint.ts) runs this same parser in its own hook, after its lookup: a
// body found there was parsed and checked when it was first answered.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors.ts";

const UTF8 = new TextDecoder("utf-8", { fatal: true });
/** A \u escape of a surrogate: only a body containing one can hold a lone surrogate after decoding. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

function refused(where: string, message: string): ApiError {
  return new ApiError("invalid_request", `The ${where} ${message}.`, {
    errors: [{ field: where, code: "invalid_format", message }],
  });
}

/**
 * The path (`body.name`, `query.x`) of the first string, or object key, holding a lone surrogate,
 * or null. Iterative: a 64 KiB body can nest deeper than the stack allows.
 */
export function loneSurrogateAt(value: unknown, root: string): string | null {
  const pending: Array<[unknown, string]> = [[value, root]];
  while (pending.length > 0) {
    const [item, where] = pending.pop()!;
    if (typeof item === "string") {
      if (!item.isWellFormed()) return where;
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => {
        pending.push([element, `${where}.${index}`]);
      });
    } else if (item !== null && typeof item === "object") {
      for (const [key, element] of Object.entries(item)) {
        if (!key.isWellFormed()) return where;
        pending.push([element, `${where}.${key}`]);
      }
    }
  }
  return null;
}

/**
 * Percent-escapes in a query that do not decode as UTF-8 (`%ED%A0%80`, an encoded lone surrogate;
 * `%FF`), which the query parser would keep as literal text.
 */
function badQueryEncoding(url: string): boolean {
  const start = url.indexOf("?");
  if (start === -1 || !url.includes("%", start)) return false;
  try {
    decodeURIComponent(url.slice(start + 1));
    return false;
  } catch {
    return true;
  }
}

function checkParameters(request: FastifyRequest): ApiError | null {
  // A lone surrogate (or a non-UTF-8 escape) can only reach the query or the path parameters
  // through a percent-escape: the HTTP parser reads raw URL bytes as Latin-1, which has none. The
  // common URL has no `%`, and costs one scan here instead of a walk over every parameter.
  if (!request.url.includes("%")) return null;
  // Only where a route reads its query (it has a schema, and documents 400); a route without one
  // refuses any query parameter by name (query-names.ts), or reads its own leniently (the console).
  if (request.routeOptions.schema?.querystring !== undefined && badQueryEncoding(request.url)) {
    return refused("query", "has a percent-encoding that is not UTF-8");
  }
  for (const [root, value] of [
    ["query", request.query],
    ["path", request.params],
  ] as const) {
    const where = loneSurrogateAt(value, root);
    if (where !== null) return refused(where, "contains a lone UTF-16 surrogate");
  }
  return null;
}

/** A JSON body parser in Fastify's content-type parser shape. */
export type JsonBodyParser = (
  request: FastifyRequest,
  body: Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;

/** Fastify's own JSON parser (prototype poisoning refused) behind a strict UTF-8 decode and the surrogate check. */
export function strictJsonParser(app: FastifyInstance): JsonBodyParser {
  const parseJson = app.getDefaultJsonParser("error", "error");
  return (request, body, done) => {
    let text: string;
    try {
      text = UTF8.decode(body);
    } catch {
      return done(refused("body", "is not valid UTF-8"), undefined);
    }
    parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      const where = SURROGATE_ESCAPE.test(text) ? loneSurrogateAt(value, "body") : null;
      if (where !== null) return done(refused(where, "contains a lone UTF-16 surrogate"), undefined);
      done(null, value);
    });
  };
}

/** Replaces Fastify's JSON parser with strictJsonParser, and checks parameters. */
export function refuseMalformedText(app: FastifyInstance): void {
  const parse = strictJsonParser(app);
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body: Buffer, done) => {
    // A route that may answer from the body's exact bytes gets them unparsed: its own hook looks
    // them up first and parses them with this same parser on a miss (endpoint.ts, answerFromBytes).
    if (request.wantsBodyBytes) {
      request.bodyBytes = body;
      return done(null, undefined);
    }
    parse(request, body, done);
  });
  // A callback hook: no promise per request.
  app.addHook("preValidation", (request, _reply, done) => {
    const error = checkParameters(request);
    done(error ?? undefined);
  });
}
