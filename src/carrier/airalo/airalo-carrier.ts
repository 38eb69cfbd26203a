// The Carrier port over Airalo's Partner API v2 (README.md beside this file): purchases
// (POST /v2/orders), top-ups (POST /v2/orders/topups), lookups of a lost answer (the order list by
// our reference in `description`), usage and state (GET /v2/sims/{iccid}, /usage) and refunds
// (POST /v2/refund, a request reviewed later). Exactly once without idempotency keys:
// place-order.ts. Answers and their meaning: client.ts. Shapes and their sources: shapes.ts.
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
import { databaseNow, recordIntent, selectIntent } from "./airalo.sql.ts";
import { AiraloClient } from "./client.ts";
import {
  type AiraloCarrierOptions,
  DEFAULT_IN_FLIGHT_MS,
  descriptionFor,
  isSendableReference,
  MAX_TIMEOUT_MS,
} from "./config.ts";
import { esimState } from "./esim-state.ts";
import { type PlaceDeps, placeOnce, recover, settledOutcome } from "./place-order.ts";
import { RateLimits } from "./rate-limit.ts";
import { requestRefund } from "./refund.ts";
import { AiraloToken } from "./token.ts";

/** Calls one provisioning may make: a lookup (for a top-up two, and its eSIM's package history), a token refresh, the POST. */
const MAX_CALLS_PER_OPERATION = 5;

export class AiraloCarrier implements Carrier {
  readonly #pool: pg.Pool;
  readonly #client: AiraloClient;
  readonly #client_id: string;
  readonly #in_flight_ms: number;
  /** Every call an operation makes has its own timeout: the lease must outlast all of them. */
  readonly operation_ms: number;

  /** An adapter serves its own supplier only. */
  serves(supplier: PackageSupplier): boolean {
    return supplier === "airalo";
  }

  constructor(options: AiraloCarrierOptions) {
    const url = new URL(options.base_url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`AIRALO_API_URL must be http or https, got ${url.protocol}`);
    }
    if (
      !Number.isInteger(options.timeout_ms) ||
      options.timeout_ms < 1 ||
      options.timeout_ms > MAX_TIMEOUT_MS
    ) {
      throw new Error(`Airalo timeout_ms must be 1 to ${MAX_TIMEOUT_MS}, got ${options.timeout_ms}`);
    }
    if (options.client_id === "" || options.client_secret === "") {
      throw new Error("AIRALO_CLIENT_ID and AIRALO_CLIENT_SECRET must not be empty");
    }
    this.#pool = options.pool;
    this.#client_id = options.client_id;
    this.#in_flight_ms = options.in_flight_ms ?? DEFAULT_IN_FLIGHT_MS;
    this.#client = new AiraloClient(
      options.base_url,
      options.timeout_ms,
      options.fetch ?? fetch,
      new RateLimits(),
    );
    const token = new AiraloToken(
      options.pool,
      options.client_secret,
      () => this.#client.requestToken(options.client_id, options.client_secret),
      options.now ?? Date.now,
    );
    this.#client.useToken(token);
    // + a second per call for the database statements around them and the rate limiter's short wait.
    this.operation_ms = (options.timeout_ms + 1_000) * MAX_CALLS_PER_OPERATION;
  }

  get #deps(): PlaceDeps {
    return { pool: this.#pool, client: this.#client, in_flight_ms: this.#in_flight_ms };
  }

  async provisionProfile(request: ProvisionRequest): Promise<CarrierOutcome<ProvisionedProfile>> {
    if (!isSendableReference(request.reference)) {
      return {
        kind: "refused",
        reason: `reference ${JSON.stringify(request.reference)} cannot travel to Airalo`,
      };
    }
    const intent = await recordIntent(this.#pool, {
      reference: request.reference,
      kind: "sim",
      package_id: request.external_package_id,
      iccid: null,
      data_mb: request.data_mb,
    });
    if (intent.kind !== "sim")
      return { kind: "refused", reason: `${request.reference} is a top-up at Airalo` };
    const outcome = await placeOnce(this.#deps, intent, () =>
      this.#client.call("/orders", {
        form: {
          package_id: intent.package_id,
          quantity: "1",
          type: "sim",
          description: descriptionFor(intent.reference),
        },
      }),
    );
    return outcome as CarrierOutcome<ProvisionedProfile>;
  }

  async topUp(request: TopUpRequest): Promise<CarrierOutcome<TopUpResult>> {
    if (!isSendableReference(request.reference)) {
      return {
        kind: "refused",
        reason: `reference ${JSON.stringify(request.reference)} cannot travel to Airalo`,
      };
    }
    if (!isSupplierIccid(request.iccid))
      return { kind: "refused", reason: `${request.iccid} is not an ICCID` };
    const intent = await recordIntent(this.#pool, {
      reference: request.reference,
      kind: "topup",
      package_id: request.external_package_id,
      iccid: request.iccid,
      data_mb: request.data_mb,
    });
    if (intent.kind !== "topup" || intent.iccid !== request.iccid) {
      return { kind: "refused", reason: `${request.reference} was placed at Airalo as another order` };
    }
    const outcome = await placeOnce(this.#deps, intent, () =>
      this.#client.call("/orders/topups", {
        form: {
          package_id: intent.package_id,
          iccid: request.iccid,
          description: descriptionFor(intent.reference),
        },
      }),
    );
    return outcome as CarrierOutcome<TopUpResult>;
  }

  /**
   * What Airalo did with the reference, never placing anything. not_found only when no POST of ours
   * can have made an order: none sent, or Airalo said "not made", or the last one is older than the
   * in-flight window and Airalo has no order for it.
   */
  async lookUpOutcome(reference: string): Promise<LookedUpOutcome> {
    const intent = await selectIntent(this.#pool, reference);
    if (intent === null) return { kind: "not_found" };
    const settled = settledOutcome(intent);
    if (settled !== null) return settled;
    if (intent.requested_at === null) return { kind: "not_found" };
    const recovered = await recover(this.#deps, intent);
    if (recovered.kind === "settled") return recovered.outcome;
    const waited_ms = (await databaseNow(this.#pool)).getTime() - intent.requested_at.getTime();
    if (waited_ms < this.#in_flight_ms) {
      return {
        kind: "unavailable",
        reason: `Airalo has no order for ${reference} yet; our POST may still land`,
      };
    }
    return { kind: "not_found" };
  }

  cancelProfile(request: CancelRequest): Promise<CancelOutcome> {
    return requestRefund(this.#deps, request);
  }

  /** Airalo's refund request names eSIMs, not orders: a top-up cannot be refunded on its own. */
  async cancelBundle(_request: CancelRequest): Promise<CancelOutcome> {
    return {
      kind: "refused",
      reason: "Airalo refunds whole eSIMs (POST /v2/refund takes ICCIDs), not a top-up on its own",
    };
  }

  /** Nothing is ever held: a refund request is asked again until Airalo's order shows it refunded. */
  async settleHeldCancel(_request: CancelRequest, _verdict: CancelVerdict): Promise<SettledCancel> {
    return "not_held";
  }

  esimState(iccid: string): Promise<EsimStateOutcome> {
    return esimState({ pool: this.#pool, client: this.#client, client_id: this.#client_id }, iccid);
  }

  /** Airalo has nothing a device would do on demand (its webhook simulator only sends a notification). */
  async simulate(_iccid: string, _event: SimulatedEvent): Promise<EsimStateOutcome> {
    return { kind: "unavailable", reason: "Airalo cannot simulate device events" };
  }
}
