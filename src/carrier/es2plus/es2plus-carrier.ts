// The carrier when profiles come from an SM-DP+ (CARRIER_PROFILES=es2plus): a real operator is two
// systems. Profiles over GSMA ES2+ (order-profile.ts, cancel-profile.ts); bundles, top-ups, usage
// and lookups over our documented HTTP carrier protocol (HttpCarrier, docs/carrier-api.md), whose
// POST /profiles then names the SM-DP+'s profile so the plan is attached to that ICCID.
import type {
  CancelOutcome,
  CancelRequest,
  CancelVerdict,
  Carrier,
  CarrierOutcome,
  EsimStateOutcome,
  LookedUpOutcome,
  PackageSupplier,
  ProvisionedProfile,
  ProvisionRequest,
  SettledCancel,
  SimulatedEvent,
  TopUpRequest,
  TopUpResult,
} from "../carrier.ts";
import type { HttpCarrier } from "../carrier-api/http-carrier.ts";
import { cancelProfileOrder } from "./cancel-profile.ts";
import { selectIntent } from "./es2plus.sql.ts";
import { type Es2PlusDeps, finishRefusal, orderProfile } from "./order-profile.ts";
import { settleHeldCancel } from "./settle-cancel.ts";

/** The most calls one provisioning makes (the refusal path: four, then CancelOrder twice). */
export const MAX_CALLS_PER_OPERATION = 6;

export class Es2PlusCarrier implements Carrier {
  readonly #deps: Es2PlusDeps;
  readonly #bundles: HttpCarrier;
  readonly operation_ms: number;

  /** An adapter serves its own supplier only. */
  serves(supplier: PackageSupplier): boolean {
    return supplier === "carrier";
  }

  /**
   * `call_timeout_ms`: one call's timeout (CARRIER_TIMEOUT_MS). A provisioning makes up to
   * MAX_CALLS_PER_OPERATION calls here (DownloadOrder, ConfirmOrder, ReleaseProfile, the plan at
   * the bundle system, CancelOrder twice), and a retry walks them again: so an operation gets that
   * many timeouts, shared by its calls (it never outlives the lease sized to it), and a carrier
   * whose every call answers within its timeout always finishes one (a budget of one timeout did
   * not, when calls took more than half of it). `budget_ms` replaces that for tests.
   */
  constructor(deps: Es2PlusDeps, bundles: HttpCarrier, call_timeout_ms: number, budget_ms?: number) {
    this.#deps = deps;
    this.#bundles = bundles;
    this.operation_ms = budget_ms ?? call_timeout_ms * MAX_CALLS_PER_OPERATION;
  }

  /** The deps of one operation: every call it makes gives up when the operation's time is out. */
  #operation(): Es2PlusDeps & { deadline: AbortSignal } {
    return { ...this.#deps, deadline: AbortSignal.timeout(this.operation_ms) };
  }

  async provisionProfile(request: ProvisionRequest): Promise<CarrierOutcome<ProvisionedProfile>> {
    const deps = this.#operation();
    const profile = await orderProfile(deps, request.reference, request.external_package_id);
    if (profile.kind !== "ok") return profile;
    const attached = await this.#bundles.attachPlan(request, profile.value, deps.deadline);
    if (attached.kind !== "refused") return attached;
    // The bundle system said no for good: the released profile must not stay usable, and the
    // refusal is final only once the SM-DP+ confirms it took the profile back.
    const intent = await selectIntent(this.#deps.pool, request.reference);
    if (intent === null) return { kind: "unavailable", reason: `${attached.reason}; no profile intent` };
    return finishRefusal(deps, intent, attached.reason);
  }

  topUp(request: TopUpRequest): Promise<CarrierOutcome<TopUpResult>> {
    return this.#bundles.topUp(request);
  }

  async lookUpOutcome(reference: string): Promise<LookedUpOutcome> {
    const intent = await selectIntent(this.#deps.pool, reference);
    if (intent?.state === "refused") return { kind: "refused", reason: intent.refusal ?? "refused" };
    if (intent !== null && intent.refusal !== null) {
      // Refused, but the SM-DP+ may still hold the profile (CancelOrder not confirmed): settling the
      // order now would leave a released profile with no order; asking again (the resolver) finishes it.
      return { kind: "unavailable", reason: "refused; the SM-DP+ has not confirmed CancelOrder yet" };
    }
    if (intent?.state === "ordering") {
      // Our intent is stored and the SM-DP+ may hold the profile: only asking again finishes it.
      return { kind: "unavailable", reason: "the SM-DP+ order is in progress; the resolver finishes it" };
    }
    const looked = await this.#bundles.lookUpOutcome(reference);
    if (intent?.state === "released" && looked.kind === "not_found") {
      // Released at the SM-DP+, plan not attached yet: not "never provisioned" (settling it as
      // failed would leave a live profile for nothing); asking again (the resolver) finishes it.
      return { kind: "unavailable", reason: "profile released at the SM-DP+; the plan is not attached yet" };
    }
    return looked;
  }

  esimState(iccid: string): Promise<EsimStateOutcome> {
    return this.#bundles.esimState(iccid);
  }

  /**
   * Sandbox: install and delete happen at the SM-DP+ (its simulator downloads, installs or deletes
   * the profile and sends HandleDownloadProgressInfo 3, 4 or 5 to us); the bundle system hears of
   * it too (a device attaching), and its state is the answer, as for every other event.
   */
  async simulate(iccid: string, event: SimulatedEvent): Promise<EsimStateOutcome> {
    if (event.event === "install" || event.event === "delete") {
      const status = await this.#deps.client.sandboxControl(
        `/sandbox/profiles/${encodeURIComponent(iccid)}/events`,
        {
          event: event.event,
        },
      );
      if (status === 404) return { kind: "not_found" };
      // 409: the profile's state does not allow it (deleting one never downloaded): the SM-DP+ has
      // nothing to do, the bundle system still hears of it.
      if (status !== 200 && status !== 409) {
        return { kind: "unavailable", reason: `SM-DP+ simulator answered ${status}` };
      }
    }
    return this.#bundles.simulate(iccid, event);
  }

  async cancelProfile(request: CancelRequest): Promise<CancelOutcome> {
    const deps = this.#operation();
    // The SM-DP+ first: a downloaded profile refuses the whole refund before the plan is touched.
    const profile = await cancelProfileOrder(deps, request);
    if (profile.kind !== "ok") return profile;
    // The bundle system's record of the profile and its plan (idempotent by reference).
    return this.#bundles.cancelProfile(request, deps.deadline);
  }

  cancelBundle(request: CancelRequest): Promise<CancelOutcome> {
    return this.#bundles.cancelBundle(request);
  }

  settleHeldCancel(request: CancelRequest, verdict: CancelVerdict): Promise<SettledCancel> {
    return settleHeldCancel(this.#deps.pool, request, verdict);
  }
}
