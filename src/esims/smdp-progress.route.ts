// POST /gsma/rsp2/es2plus/handleDownloadProgressInfo: the SM-DP+'s notifications (SGP.22 5.3.5),
// when profiles come from it (CARRIER_PROFILES=es2plus). Authenticated by the server layer before
// the body is parsed (ES2PLUS_CALLBACK_TOKEN as a bearer token; mutual TLS is terminated in front
// of the service). Always 204 once authenticated, as ES2+ expects of a notification: a malformed
// one is logged and dropped (re-sending it would not make it valid), a repeat is ignored.
import { Type } from "typebox";
import { ADMIN_PROTOCOL } from "../carrier/es2plus/messages.ts";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses } from "../shared/schemas.ts";
import { receiveDownloadProgress } from "./receive-download-progress.ts";

export const smdpProgressRoute = endpoint({
  method: "POST",
  url: "/gsma/rsp2/es2plus/handleDownloadProgressInfo",
  schema: {
    hide: true,
    operationId: "handleDownloadProgressInfo",
    summary: "SM-DP+ reports a profile's download progress (SM-DP+ only)",
    response: { 204: Type.Null(), ...errorResponses("unauthorized", "not_found") },
  },
  own_body: true,
  handler: (ctx) => async (request, reply) => {
    const outcome = await receiveDownloadProgress(ctx, request.body);
    if (outcome === "invalid")
      request.log.warn("SM-DP+ sent a malformed HandleDownloadProgressInfo; dropped");
    return reply.code(204).header("x-admin-protocol", ADMIN_PROTOCOL).send(null);
  },
});
