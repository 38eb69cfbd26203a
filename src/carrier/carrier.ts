// The Carrier port: what the ordering service needs from a mobile carrier, and nothing more.
// Every call carries our reference (the order id); asking twice with the same reference never
// provisions twice, so a retry, a resolver run or a crash recovery can always just ask again.

/**
 * Who provisions an order (contract "Suppliers (operator side)"): our carrier protocol and ES2+
 * (`carrier`), Airalo or eSIM Go. Every call of the port names it, read from the order's own row
 * (or the eSIM's order): route-by-supplier.ts sends the call to that supplier's adapter. An
 * adapter serves one supplier and needs no more than the request without it.
 */
export type PackageSupplier = "carrier" | "airalo" | "esimgo";

/** A request as the port takes it: with the supplier of the order it is about. */
export type ForSupplier<T> = T & { supplier: PackageSupplier };

export type ProvisionRequest = {
  /** Our idempotency reference: the order id. */
  reference: string;
  external_package_id: string;
  /** null: unlimited. */
  data_mb: number | null;
  validity_days: number;
  /** YYYY-MM-DD, or null when the plan starts on first connection. */
  start_date: string | null;
  /** The end user's email. The sandbox simulator reads its magic values from it. */
  end_user_email: string;
};

export type ProvisionedProfile = {
  iccid: string;
  smdp_address: string;
  /** The matching ID; the LPA string is `LPA:1$<smdp_address>$<activation_code>`. */
  activation_code: string;
};

/** Its supplier (ForSupplier) is the eSIM's: a top-up package is sold only onto an eSIM of its own. */
export type TopUpRequest = {
  reference: string;
  iccid: string;
  external_package_id: string;
  data_mb: number | null;
  validity_days: number;
  end_user_email: string;
};

export type TopUpResult = { iccid: string };

export type CancelRequest = { reference: string /* the order being refunded */; iccid: string };
/** ok: cancelled now or earlier (idempotent by reference); refused: the carrier will not (downloaded, used). */
export type CancelOutcome =
  | { kind: "ok" }
  | { kind: "refused"; reason: "esim_installed" | "bundle_used" | string }
  | { kind: "unavailable"; reason: string };

/**
 * What an operator found out at the carrier about a cancel the carrier's answer left ambiguous
 * (ES2+ CancelOrder's 8.2.1/3.5 after a lost answer): the profile was cancelled, or it is on a device.
 */
export type CancelVerdict = "cancelled" | "installed";
/**
 * settled: the verdict is recorded, and asking to cancel again now ends the refund accordingly;
 * not_held: no ambiguous cancel of this reference; downloaded: "cancelled" contradicts a download
 * notification the carrier sent (the refund is refused on its next attempt instead).
 */
export type SettledCancel = "settled" | "not_held" | "downloaded";

/** An expected outcome is a value, not an exception (style habit 4). */
export type CarrierOutcome<T> =
  | { kind: "ok"; value: T }
  /** Definitive: the carrier said no. Nothing was provisioned; release the hold. */
  | { kind: "refused"; reason: string }
  /** Unknown outcome (timeout, connection refused, 5xx): ask again later with the same reference. */
  | { kind: "unavailable"; reason: string };

/** What the carrier did with a reference, asked without asking it to do anything. */
export type LookedUpOutcome =
  | { kind: "ok"; value: ProvisionedProfile | TopUpResult }
  | { kind: "refused"; reason: string }
  /** Definitive: the carrier has no record of this reference (never provisioned). */
  | { kind: "not_found" }
  | { kind: "unavailable"; reason: string };

export interface Carrier extends EsimLifecycle {
  /**
   * The longest one provisioning, top-up or cancel may take, every call it makes included: the
   * lease of the order or refund driving it is sized to this, so nobody else drives it meanwhile.
   */
  readonly operation_ms: number;
  /**
   * Whether this process can reach `supplier` now: checked before a purchase, a top-up or a refund
   * is created, so one the process cannot send is refused with nothing made or charged. A call
   * about an order already sent goes ahead whatever this says (the router answers unavailable).
   */
  serves(supplier: PackageSupplier): boolean;
  provisionProfile(request: ForSupplier<ProvisionRequest>): Promise<CarrierOutcome<ProvisionedProfile>>;
  topUp(request: ForSupplier<TopUpRequest>): Promise<CarrierOutcome<TopUpResult>>;
  /**
   * The outcome of an earlier reference; never provisions (an operator settling a stuck order).
   * `supplier`: the order's, where its provisioning was asked.
   */
  lookUpOutcome(reference: string, supplier: PackageSupplier): Promise<LookedUpOutcome>;
  cancelProfile(request: ForSupplier<CancelRequest>): Promise<CancelOutcome>; // a new eSIM's order: the profile and its bundle
  cancelBundle(request: ForSupplier<CancelRequest>): Promise<CancelOutcome>; // a top-up order: its queued bundle only
  /** An operator's verdict on a held (ambiguous) cancelProfile of `request.reference`. */
  settleHeldCancel(request: ForSupplier<CancelRequest>, verdict: CancelVerdict): Promise<SettledCancel>;
}

// After the sale (contract "eSIMs"): the signal shapes are the carrier protocol's own
// (src/protocols/carrier-api.ts); the port re-exports them.
export type {
  CarrierBundle,
  CarrierBundleStatus,
  EsimSignal,
  ProfileState,
  SimulatedEvent,
} from "../protocols/carrier-api.ts";

import type { EsimSignal, SimulatedEvent } from "../protocols/carrier-api.ts";

export type EsimStateOutcome =
  | { kind: "ok"; value: EsimSignal }
  /** The carrier has no such ICCID. */
  | { kind: "not_found" }
  | { kind: "unavailable"; reason: string };

export interface EsimLifecycle {
  /** Pull: the eSIM's current state at its supplier (its order's); never changes anything. */
  esimState(iccid: string, supplier: PackageSupplier): Promise<EsimStateOutcome>;
  /**
   * Sandbox only: asks the carrier simulator's control API to make `event` happen, as a device
   * would; the carrier then signals it like any other change. A real carrier answers unavailable.
   */
  simulate(iccid: string, event: SimulatedEvent, supplier: PackageSupplier): Promise<EsimStateOutcome>;
}
