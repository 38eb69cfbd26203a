// POST /carrier/callbacks: the carrier pushes an eSIM signal (design.md, "After the sale"). Not
// under /v1 and not a partner route: the carrier authenticates with the shared secret
// CARRIER_CALLBACK_TOKEN as a bearer token, checked by the server layer before the body is parsed.
// The signal is applied exactly like a pulled one; a repeated or late signal changes nothing, so
// the carrier may re-send freely. Any 2xx tells the carrier to stop re-sending; a crash before the
// commit answers nothing, so it re-sends. A signal naming a bundle we hold no row for is answered
// 503 (send it again) only while that bundle's order is pending here: its completion, our side of
// the carrier's answer, has not committed yet (and the completion makes the eSIM due for a pull).
// Any other unknown bundle is one we will never hold (an order that failed here, someone else's
// reference): it is logged and the signal accepted, or the carrier would re-send it forever.
import { Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import { EsimSignalSchema, parseEsimSignal } from "../protocols/esim-signal.ts";
import { endpoint } from "../shared/endpoint.ts";
import { ApiError } from "../shared/errors.ts";
import { errorResponses } from "../shared/schemas.ts";
import { applySignal } from "./apply-signal.ts";

/**
 * Which of these references (order ids) name orders still waiting for the carrier's answer. The
 * orders domain answers it; the server passes it in (orders already depend on this domain).
 */
export type PendingReferences = (db: Executor, references: readonly string[]) => Promise<string[]>;

const CallbackReceived = Type.Object(
  {
    received: Type.Literal(true),
    known: Type.Boolean({ description: "False when no eSIM of ours has this ICCID (nothing was changed)." }),
    changed: Type.Boolean({
      description: "Whether the signal moved anything (false for a repeated or late one).",
    }),
  },
  { additionalProperties: false },
);

export function carrierCallbackRoute(pendingReferences: PendingReferences) {
  return endpoint({
    method: "POST",
    url: "/carrier/callbacks",
    schema: {
      // Not part of the partner API document: the carrier's interface, documented in the README and
      // in src/simulators/carrier/README.md. The schemas still validate and serialize.
      hide: true,
      operationId: "receiveCarrierCallback",
      summary: "Carrier pushes an eSIM's state (carrier only)",
      description:
        "The carrier's notification of an eSIM's profile state and per-bundle usage, as one snapshot. " +
        "Authenticated with `Authorization: Bearer <CARRIER_CALLBACK_TOKEN>`; 404 when callbacks are disabled.",
      body: EsimSignalSchema,
      response: { 200: CallbackReceived, ...errorResponses("unauthorized", "not_found") },
    },
    handler: (ctx) => {
      // The token (and whether callbacks exist at all) is checked before the body is parsed, in the
      // onRequest hook the server layer puts around this route (server/app.ts).
      return async (request, reply) => {
        const signal = parseEsimSignal(request.body);
        if (signal === null) {
          throw new ApiError("invalid_request", "The signal's ICCID check digit or a time is not valid.");
        }
        const applied = await applySignal(ctx, signal, "callback");
        const unknown = applied.kind === "applied" ? applied.unknown_references : [];
        // What we know is applied either way; only the unknown bundles decide the answer.
        if (unknown.length > 0 && (await pendingReferences(ctx.db, unknown)).length > 0) {
          throw new ApiError(
            "service_unavailable",
            "The signal names a bundle not recorded yet; send it again.",
            {
              headers: { "retry-after": "1" },
            },
          );
        }
        if (unknown.length > 0) {
          request.log.warn(
            { iccid: signal.iccid, references: unknown.slice(0, 20), unknown_bundles: unknown.length },
            "carrier callback names bundles no order of ours holds; accepted and ignored",
          );
        }
        return reply.send({
          received: true as const,
          known: applied.kind === "applied",
          changed: applied.kind === "applied" && applied.changed,
        });
      };
    },
  });
}
