// Sandbox use case: make the simulated carrier do something to one of the partner's eSIMs, as a
// device would (install, use data, run out its validity, delete the profile). The simulator's
// control API makes it happen and answers with the carrier's new state; that answer is applied
// through the same path as every carrier signal (apply-signal.ts), which also pushes the same
// state as a callback. Nothing here writes our tables directly.
import type { SimulatedEvent } from "../carrier/carrier.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { applySignal } from "./apply-signal.ts";
import { getEsim } from "./get-esim.ts";
import type { EsimBody } from "./render-esim.ts";

export async function simulateEsimEvent(
  ctx: AppContext,
  partner_id: string,
  iccid: string,
  event: SimulatedEvent,
): Promise<EsimBody> {
  if (ctx.config.app_env !== "sandbox") {
    throw new ApiError("not_found", `No route POST /v1/sandbox/esims/${iccid}/simulate.`);
  }
  // 400 invalid_iccid, then 404 esim_not_found for another partner's (before the carrier hears of it).
  await getEsim(ctx.db, partner_id, iccid);
  if (event.event === "use_data" && event.data_mb === undefined) {
    throw new ApiError("invalid_request", "use_data needs data_mb, a positive whole number of megabytes.", {
      errors: [{ field: "data_mb", code: "required", message: "is required for use_data" }],
    });
  }
  const outcome = await ctx.carrier.simulate(iccid, event);
  if (outcome.kind === "unavailable")
    throw new ApiError("carrier_unavailable", "The carrier simulator did not answer.");
  if (outcome.kind === "not_found")
    throw new ApiError("carrier_error", "The carrier simulator has no such eSIM.");
  await applySignal(ctx, outcome.value, "pull");
  return getEsim(ctx.db, partner_id, iccid);
}
