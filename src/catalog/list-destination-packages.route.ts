// GET /v1/esim/destination/{destination_code}/packages (spec 4.1), behind the partner API's
// authentication hook. Answers from the in-process cache of serialized bodies.
import { gzipSync } from "node:zlib";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import {
  CACHE_HEADERS,
  type DestinationPackagesBody,
  DestinationPackagesResponse,
  partnerDestinationAnswer,
  rememberedAnswer,
} from "./list-destination-packages.ts";
import { cachedPartnerPriceList } from "./partner-prices.ts";

/** Partners may reuse a response for a minute; the ETag makes revalidation after that cheap. */
const CACHE_CONTROL = "private, max-age=60";
/** Entity tags compared per If-None-Match header; a longer list is not a real client. */
const MAX_IF_NONE_MATCH_TAGS = 64;

const Params = Type.Object({
  destination_code: Type.String({
    pattern: "^[A-Za-z]{2}$",
    description: "ISO 3166-1 alpha-2 code, case-insensitive (`FR` or `fr`).",
  }),
});

const NotModified = Type.Null({
  description: "Not modified: the If-None-Match header names the current ETag. No body.",
  headers: CACHE_HEADERS,
});

function opaqueTag(tag: string): string {
  return tag.startsWith("W/") ? tag.slice(2) : tag;
}

/** RFC 9110 13.1.2: If-None-Match uses the weak comparison; `*` matches any current body. */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  const current = opaqueTag(etag);
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.slice(0, MAX_IF_NONE_MATCH_TAGS).some((tag) => opaqueTag(tag) === current);
}

/** The body is already JSON bytes: Fastify sends a Buffer as is, skipping response serialization. */
function sendSerialized(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(body);
}

/** No payload at all: Fastify then sends neither a body nor a Content-Length (RFC 9110 15.4.5). */
function sendNotModified(reply: FastifyReply): FastifyReply {
  return reply.code(304).send();
}

/**
 * The gzip representation of a cached body, made once per body on the first request that accepts
 * it (the bodies are the catalog cache's, shared by every partner of a price list, and dropped with
 * it). Since every covered country's networks are listed (contract "Catalog additions"), a regional
 * or global package weighs kilobytes: compressed, a destination's answer is about a tenth.
 */
const gzipped = new WeakMap<Buffer, DestinationPackagesBody>();

function gzipOf({ body, etag }: DestinationPackagesBody): DestinationPackagesBody {
  let compressed = gzipped.get(body);
  if (compressed === undefined) {
    // Another representation, so another strong validator (RFC 9110 8.8.3).
    compressed = { body: gzipSync(body), etag: `${etag.slice(0, -1)}-gzip"` };
    gzipped.set(body, compressed);
  }
  return compressed;
}

/** Whether Accept-Encoding takes gzip (a `gzip` or `*` coding whose q is not 0, RFC 9110 12.5.3). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (typeof header !== "string" || header.length > 1_000) return false;
  return header.split(",").some((part) => {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    if (coding.trim() !== "gzip" && coding.trim() !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The body with its validators, gzipped when the client takes it, or 304 when it holds it already. */
function sendAnswer(
  headers: { "if-none-match"?: string; "accept-encoding"?: string | string[] },
  reply: FastifyReply,
  answer: DestinationPackagesBody,
): void {
  const gzip = acceptsGzip(headers["accept-encoding"]);
  const { body, etag } = gzip ? gzipOf(answer) : answer;
  reply.header("etag", etag).header("cache-control", CACHE_CONTROL).header("vary", "accept-encoding");
  // Either representation's tag names the same content: a client switching codings still gets 304.
  if (
    ifNoneMatchMatches(headers["if-none-match"], etag) ||
    ifNoneMatchMatches(headers["if-none-match"], answer.etag)
  )
    sendNotModified(reply);
  else if (gzip) sendSerialized(reply.header("content-encoding", "gzip"), body);
  else sendSerialized(reply, body);
}

export const listDestinationPackagesRoute = endpoint({
  method: "GET",
  url: "/esim/destination/:destination_code/packages",
  schema: {
    operationId: "listDestinationPackages",
    summary: "List the packages and B2B prices of a destination",
    description:
      "Returns the active packages covering a destination, with the wholesale price the wallet is " +
      "debited (your price list), the list price and a recommended retail price. Supports conditional requests: the response carries a " +
      "strong `ETag`; send it back in `If-None-Match` to get `304 Not Modified` while the catalog is " +
      "unchanged. With `Accept-Encoding: gzip` the body comes gzipped (`Content-Encoding: gzip`, about a " +
      "tenth of the size: every covered country's networks are listed), under its own ETag.",
    tags: ["Catalog"],
    security: PARTNER_SECURITY,
    params: Params,
    response: {
      200: DestinationPackagesResponse,
      304: NotModified,
      ...errorResponses("destination_not_found", "unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => {
    const priceListOf = (partner_id: string) => cachedPartnerPriceList(ctx.pool, ctx.db, partner_id);
    // Not async: an answer already served to this partner at the current catalog version is sent
    // with no promise and no microtask (the hot path); anything else goes through the caches.
    return (request, reply) => {
      const partner_id = request.partner!.partner_id;
      const code = request.params.destination_code;
      const answer = rememberedAnswer(ctx.pool, partner_id, code);
      if (answer !== undefined) {
        sendAnswer(request.headers, reply, answer);
        return;
      }
      return partnerDestinationAnswer(ctx.pool, partner_id, code, priceListOf).then((loaded) =>
        sendAnswer(request.headers, reply, loaded),
      );
    };
  },
});
