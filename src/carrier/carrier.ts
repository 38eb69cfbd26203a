// The Carrier port: what the ordering service needs from a mobile carrier, and nothing more.
// Every call carries our reference (the order id); asking twice with the same reference never
// provisions twice, so a retry, a resolver run or a crash recovery can always just ask again.

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

export type TopUpRequest = {
  reference: string;
  iccid: string;
  external_package_id: string;
  data_mb: number | null;
  validity_days: number;
  end_user_email: string;
};

export type TopUpResult = { iccid: string };

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

export interface Carrier {
  provisionProfile(request: ProvisionRequest): Promise<CarrierOutcome<ProvisionedProfile>>;
  topUp(request: TopUpRequest): Promise<CarrierOutcome<TopUpResult>>;
  /** The outcome of an earlier reference; never provisions (an operator settling a stuck order). */
  lookUpOutcome(reference: string): Promise<LookedUpOutcome>;
}
