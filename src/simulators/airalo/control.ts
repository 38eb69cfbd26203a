// The control interface (README "Control"): what only a fake offers. Faults and limits, the
// partner's credit, what a device does with an eSIM (data use, recycling), the manual review of
// refund requests, and the webhooks sent. Guarded by its own bearer key (AIRALO_SIM_CONTROL_KEY,
// the client secret by default), never by an Airalo token.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import {
  creditCents,
  recordUsage,
  recycleSim,
  selectRefund,
  selectSim,
  selectTopupOrders,
  setCredit,
} from "./airalo.sql.ts";
import type { Context } from "./context.ts";
import { ControlPatch, type FaultSettings, patchSettings } from "./faults.ts";
import { sendLowData } from "./notifications.ts";
import { refundShape, reviewRefund } from "./refunds.ts";
import { usageOf } from "./sims.ts";

const IccidParams = Type.Object({ iccid: Type.String({ pattern: "^[0-9]{10,22}$" }) });
const IdParams = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,18}$" }) });
const UsageBody = Type.Object(
  { used_mb: Type.Integer({ minimum: 0, maximum: 100_000_000 }) },
  { additionalProperties: false },
);
const CreditBody = Type.Object(
  { credit_usd: Type.Number({ minimum: 0, maximum: 100_000_000 }) },
  { additionalProperties: false },
);
const ReviewBody = Type.Object(
  { outcome: Type.Union([Type.Literal("approved"), Type.Literal("rejected")]) },
  { additionalProperties: false },
);

/** Low-data levels crossed by a data use, as remaining-percentage thresholds ([DOC:webhook-definition-1380483m0] levels). */
const DATA_LEVELS = [
  { level: "75%", used_share: 0.75 },
  { level: "90%", used_share: 0.9 },
];

export function registerControlRoutes(
  app: FastifyInstance,
  context: Context,
  settings: { get: () => FaultSettings; set: (next: FaultSettings) => void },
  limiter_reset: () => void,
): void {
  app.get("/control", async () => ({
    ...settings.get(),
    credit_usd: (await creditCents(context.pool)) / 100,
  }));
  app.post<{ Body: Static<typeof ControlPatch> }>(
    "/control",
    { schema: { body: ControlPatch } },
    async (request) => {
      settings.set(patchSettings(settings.get(), request.body));
      if (request.body.reset_rate_limits) limiter_reset();
      if (request.body.usage_cache_ms !== undefined) context.usage_cache.clear();
      return settings.get();
    },
  );
  app.post<{ Body: Static<typeof CreditBody> }>(
    "/control/account",
    { schema: { body: CreditBody } },
    async (request) => {
      await setCredit(context.pool, Math.round(request.body.credit_usd * 100));
      return { credit_usd: (await creditCents(context.pool)) / 100 };
    },
  );
  app.get("/control/account", async () => ({ credit_usd: (await creditCents(context.pool)) / 100 }));
  app.post<{ Params: { iccid: string }; Body: Static<typeof UsageBody> }>(
    "/control/sims/:iccid/usage",
    { schema: { params: IccidParams, body: UsageBody } },
    async (request, reply) => {
      const usage = await useData(context, request.params.iccid, request.body.used_mb);
      return usage === null ? reply.code(404).send({ error: "not_found" }) : usage;
    },
  );
  app.post<{ Params: { iccid: string } }>(
    "/control/sims/:iccid/recycle",
    { schema: { params: IccidParams } },
    async (request, reply) => {
      const sim = await recycleSim(context.pool, request.params.iccid);
      context.usage_cache.delete(request.params.iccid);
      return sim === null
        ? reply.code(404).send({ error: "not_found" })
        : { iccid: sim.iccid, recycled_at: sim.recycled_at };
    },
  );
  registerRefundControl(app, context);
  app.get("/control/webhooks", async () => ({ deliveries: context.webhooks.deliveries }));
}

function registerRefundControl(app: FastifyInstance, context: Context): void {
  app.get<{ Params: { id: string } }>(
    "/control/refunds/:id",
    { schema: { params: IdParams } },
    async (request, reply) => {
      const refund = await selectRefund(context.pool, request.params.id);
      return refund === null ? reply.code(404).send({ error: "not_found" }) : refundShape(refund);
    },
  );
  app.post<{ Params: { id: string }; Body: Static<typeof ReviewBody> }>(
    "/control/refunds/:id/review",
    { schema: { params: IdParams, body: ReviewBody } },
    async (request, reply) => {
      const reviewed = await reviewRefund(context, request.params.id, request.body.outcome);
      if (reviewed === "not_found") return reply.code(404).send({ error: "not_found" });
      if (reviewed === "already_reviewed") return reply.code(409).send({ error: "already_reviewed" });
      return refundShape(reviewed);
    },
  );
}

/**
 * A device used data: sets the eSIM's total use (the first use activates it) and sends the
 * low-data webhook for each level the use crossed. Answers the usage as GET .../usage would
 * without its cache, or null for an unknown ICCID.
 */
async function useData(context: Context, iccid: string, used_mb: number) {
  const before = await selectSim(context.pool, iccid);
  if (before === null) return null;
  const after = (await recordUsage(context.pool, iccid, used_mb))!;
  const topups = await selectTopupOrders(context.pool, iccid);
  const usage = usageOf(after, topups);
  if (usage.total > 0) {
    for (const { level, used_share } of DATA_LEVELS) {
      const threshold = usage.total * used_share;
      if (Number(before.used_mb) < threshold && used_mb >= threshold) {
        const remaining = Math.max(0, Math.round((100 * (usage.total - used_mb)) / usage.total));
        await sendLowData(context, iccid, level, remaining, context.settings().webhook_url);
      }
    }
  }
  return usage;
}
