// The Carrier port over eSIM Go's API v2.4 (README.md beside this file): purchases and top-ups
// (POST /orders, a top-up being an order on our eSIM's ICCID), lookups of a lost answer (the
// eSIM's customerRef, the order list in a createdAt window), state and usage (GET /esims/{iccid},
// /bundles) and refunds (revoking an unused bundle with a refund). Exactly once without idempotency
// keys: place-order.ts. Answers and their meaning: client.ts. Shapes and their sources: shapes.ts.
import type pg from "pg";
import { isSupplierIccid } from "../../lib/luhn.ts";
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
import { EsimGoClient } from "./client.ts";
import {
  DEFAULT_IN_FLIGHT_MS,
  type EsimGoCarrierOptions,
  isSendableReference,
  MAX_TIMEOUT_MS,
} from "./config.ts";
import { esimState } from "./esim-state.ts";
import { recordIntent, selectIntent } from "./esimgo.sql.ts";
import { type PlaceDeps, placeOnce, resolveUnanswered, settledOutcome } from "./place-order.ts";
import { RateLimit } from "./rate-limit.ts";
import { MAX_LOOKUP_CALLS } from "./recovery.ts";
import { revokeWithRefund } from "./refund.ts";

/**
 * Calls one provisioning may make, each with its own timeout: another order of the bundle's
 * lookup, our own lookup, the POST, the install details, the customerRef. The lease must outlast
 * all of them.
 */
const MAX_CALLS_PER_OPERATION = 2 * MAX_LOOKUP_CALLS + 3;

export class EsimGoCarrier implements Carrier {
  readonly #pool: pg.Pool;
  readonly #client: EsimGoClient;
  readonly #in_flight_ms: number;
  readonly #timeout_ms: number;
  readonly operation_ms: number;

  /** An adapter serves its own supplier only. */
  serves(supplier: PackageSupplier): boolean {
    return supplier === "esimgo";
  }

  constructor(options: EsimGoCarrierOptions) {
    const url = new URL(options.base_url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`ESIMGO_API_URL must be http or https, got ${url.protocol}`);
    }
    if (
      !Number.isInteger(options.timeout_ms) ||
      options.timeout_ms < 1 ||
      options.timeout_ms > MAX_TIMEOUT_MS
    ) {
      throw new Error(`eSIM Go timeout_ms must be 1 to ${MAX_TIMEOUT_MS}, got ${options.timeout_ms}`);
    }
    if (options.api_key === "") throw new Error("ESIMGO_API_KEY must not be empty");
    this.#pool = options.pool;
    this.#timeout_ms = options.timeout_ms;
    this.#in_flight_ms = options.in_flight_ms ?? DEFAULT_IN_FLIGHT_MS;
    this.#client = new EsimGoClient(
      options.base_url,
      options.api_key,
      options.timeout_ms,
      options.fetch ?? fetch,
      new RateLimit(undefined, options.now ?? Date.now),
    );
    // + a second per call for the database statements around them and the rate limiter's short wait.
    this.operation_ms = (options.timeout_ms + 1_000) * MAX_CALLS_PER_OPERATION;
  }

  get #deps(): PlaceDeps {
    return {
      pool: this.#pool,
      client: this.#client,
      in_flight_ms: this.#in_flight_ms,
      timeout_ms: this.#timeout_ms,
    };
  }

  async provisionProfile(request: ProvisionRequest): Promise<CarrierOutcome<ProvisionedProfile>> {
    if (!isSendableReference(request.reference)) {
      return {
        kind: "refused",
        reason: `reference ${JSON.stringify(request.reference)} cannot travel to eSIM Go`,
      };
    }
    const intent = await recordIntent(this.#pool, {
      reference: request.reference,
      kind: "esim",
      item: request.external_package_id,
      iccid: null,
    });
    if (intent.kind !== "esim")
      return { kind: "refused", reason: `${request.reference} is a top-up at eSIM Go` };
    const outcome = await placeOnce(this.#deps, intent, {
      type: "transaction",
      assign: true,
      order: [{ type: "bundle", quantity: 1, item: intent.item, allowReassign: false }],
    });
    return outcome as CarrierOutcome<ProvisionedProfile>;
  }

  async topUp(request: TopUpRequest): Promise<CarrierOutcome<TopUpResult>> {
    if (!isSendableReference(request.reference)) {
      return {
        kind: "refused",
        reason: `reference ${JSON.stringify(request.reference)} cannot travel to eSIM Go`,
      };
    }
    if (!isSupplierIccid(request.iccid))
      return { kind: "refused", reason: `${request.iccid} is not an ICCID` };
    const intent = await recordIntent(this.#pool, {
      reference: request.reference,
      kind: "topup",
      item: request.external_package_id,
      iccid: request.iccid,
    });
    if (intent.kind !== "topup" || intent.iccid !== request.iccid) {
      return { kind: "refused", reason: `${request.reference} was placed at eSIM Go as another order` };
    }
    // allowReassign false: an incompatible bundle is refused, never put on a new ICCID (§3, §4).
    const outcome = await placeOnce(this.#deps, intent, {
      type: "transaction",
      assign: true,
      order: [
        { type: "bundle", quantity: 1, item: intent.item, iccids: [intent.iccid], allowReassign: false },
      ],
    });
    return outcome as CarrierOutcome<TopUpResult>;
  }

  /**
   * What eSIM Go did with the reference, never placing anything. not_found only when no POST of
   * ours can have made an order: none sent, or eSIM Go said "not made", or the last one is older
   * than the in-flight window and eSIM Go has no order for it.
   */
  async lookUpOutcome(reference: string): Promise<LookedUpOutcome> {
    const intent = await selectIntent(this.#pool, reference);
    if (intent === null) return { kind: "not_found" };
    const settled = settledOutcome(intent);
    if (settled !== null) return settled;
    if (intent.order_reference !== null) {
      return {
        kind: "unavailable",
        reason: `eSIM Go order ${intent.order_reference} is made; its eSIM is not read yet`,
      };
    }
    if (intent.requested_at === null) return { kind: "not_found" };
    const resolved = await resolveUnanswered(this.#deps, intent);
    return resolved.kind === "settled" ? resolved.outcome : { kind: "not_found" };
  }

  /** A new eSIM's order: its bundle revoked with a refund (eSIM Go then takes the unused eSIM back). */
  cancelProfile(request: CancelRequest): Promise<CancelOutcome> {
    return revokeWithRefund({ pool: this.#pool, client: this.#client }, request);
  }

  /** A top-up's order: its bundle revoked with a refund. */
  cancelBundle(request: CancelRequest): Promise<CancelOutcome> {
    return revokeWithRefund({ pool: this.#pool, client: this.#client }, request);
  }

  /** Nothing is ever held: a revoke's outcome is read back from the eSIM's bundles. */
  async settleHeldCancel(_request: CancelRequest, _verdict: CancelVerdict): Promise<SettledCancel> {
    return "not_held";
  }

  esimState(iccid: string): Promise<EsimStateOutcome> {
    return esimState({ pool: this.#pool, client: this.#client }, iccid);
  }

  /** eSIM Go has no device simulation in its API (the fake's /sandbox is not eSIM Go's). */
  async simulate(_iccid: string, _event: SimulatedEvent): Promise<EsimStateOutcome> {
    return { kind: "unavailable", reason: "eSIM Go cannot simulate device events" };
  }
}
