// Row types of the tables in src/db/migrations, for Kysely. Keep in step with the SQL.
import type { ColumnType, Generated } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** The contract's eSIM statuses (migration 0005): forward only, but a top-up may revive depleted/expired. */
export type EsimStatus =
  | "released"
  | "installed"
  | "active"
  | "depleted"
  | "expired"
  | "deleted"
  | "cancelled";
/** Who sells a package and provisions its orders (migrations 0035, 0038). */
export type PackageSupplier = "carrier" | "airalo" | "esimgo";

export type BundleStatus = "queued" | "active" | "depleted" | "expired" | "cancelled";

/** A mobile network a package uses in one country (migration 0040). */
export type PackageNetwork = { country_code: string; name: string; technologies: string[] };

export type Database = {
  partners: {
    partner_id: string;
    name: string;
    created_at: Timestamp;
    /** An owner requires a second factor of every person of the team (migration 0023). */
    require_two_factor: Generated<boolean>;
    /** Suspended: its keys and people may read, every write is refused (migration 0030). */
    status: Generated<"active" | "suspended">;
    /** The operator's reason, while suspended; null while active. */
    suspended_reason: string | null;
    suspended_at: Date | null;
  };
  api_keys: {
    key_id: string;
    partner_id: string;
    key_hash: Buffer;
    key_hint: string;
    created_at: Timestamp;
    revoked_at: Date | null;
    last_used_at: Date | null;
    /** Migration 0023: a name, a scope, and the addresses (CIDRs, as text) it may be used from; empty = any. */
    name: Generated<string>;
    scope: Generated<"full" | "read_only">;
    allowed_ips: Generated<string[]>;
  };
  ledger_accounts: {
    account_id: string;
    kind: "partner_wallet" | "operator_funding" | "operator_revenue";
    partner_id: string | null;
    currency: string;
    posted_credits_minor: Generated<number>;
    posted_debits_minor: Generated<number>;
    pending_debits_minor: Generated<number>;
    low_balance_threshold_minor: number | null;
    created_at: Timestamp;
  };
  ledger_transfers: {
    transfer_id: string;
    debit_account_id: string;
    credit_account_id: string;
    amount_minor: number;
    currency: string;
    kind: "wallet_credit" | "purchase" | "refund" | "adjustment";
    state: "pending" | "posted" | "voided";
    reference: string;
    created_at: Timestamp;
    resolved_at: Date | null;
    /** Set when posted (migration 0006): the wallet statement's total order. */
    posted_seq: number | null;
    /** Set when posted (migration 0008): the settled balance of the wallet it moved, right after it. */
    wallet_balance_after_minor: number | null;
    /** An adjustment's reason (migration 0031); null on every other kind. */
    reason: string | null;
    /** A purchase posted in part (a group order's completed lines, migration 0047): what was held. */
    held_minor: Generated<number | null>;
  };
  destinations: { destination_code: string; name: string };
  partner_pricing: { partner_id: string; discount_percent: number; updated_at: Generated<Date> };
  partner_price_overrides: { partner_id: string; package_id: string; amount_minor: number };
  packages: {
    package_id: string;
    external_package_id: string;
    name: string;
    data_mb: number | null;
    validity_days: number;
    wholesale_minor: number;
    retail_minor: number;
    currency: string;
    coverage: "country" | "regional" | "global";
    region: string | null;
    active: Generated<boolean>;
    updated_at: Timestamp;
    /** Who sells it (migration 0035); the operator's to see, never a partner's. */
    supplier: Generated<PackageSupplier>;
    supplier_net_minor: number | null;
    supplier_currency: string | null;
    top_up_only: Generated<boolean>;
    /** Per covered country (migration 0040): [{country_code, name, technologies}]; [] not stated. */
    networks: Generated<PackageNetwork[]>;
    /** Both set or both null; only on unlimited packages (migration 0040). */
    fair_use_daily_data_mb: number | null;
    fair_use_throttled_kbps: number | null;
    kyc_required: Generated<boolean>;
  };
  /** The eSIM-capable devices (migration 0040), replaced whole by an import. */
  compatible_devices: { brand: string; model: string; os: string };
  compatible_devices_list: {
    singleton: Generated<boolean>;
    source: "shipped" | "import";
    updated_at: Date;
    device_count: number;
  };
  /** The last catalog sync per supplier, re-run every SUPPLIER_SYNC_MINUTES (migration 0035). */
  supplier_catalog_syncs: {
    supplier: "airalo" | "esimgo";
    markup_basis_points: number;
    destination_codes: Generated<string[]>;
    last_run_at: Generated<Date>;
    last_outcome: string;
    added: Generated<number>;
    changed: Generated<number>;
    removed: Generated<number>;
  };
  package_destinations: { package_id: string; destination_code: string };
  catalog_version: { singleton: Generated<boolean>; version: number };
  /** The catalog change feed (migration 0041); partner_id null: a catalog-wide change. */
  catalog_changes: {
    seq: Generated<number>;
    change_id: string;
    partner_id: string | null;
    kind: "added" | "updated" | "removed";
    package_id: string;
    created_at: Timestamp;
  };
  /** How far catalog changes have become package.* events (migration 0041). */
  catalog_change_fanout: { singleton: Generated<boolean>; last_seq: number; last_partner_id: string | null };
  carts: {
    cart_key: string;
    partner_id: string;
    package_id: string;
    external_package_id: string;
    data_mb: number | null;
    validity_days: number;
    start_date: string | null;
    total_minor: number;
    currency: string;
    created_at: Timestamp;
    expires_at: Date;
    /** Who sells the package (migration 0038): copied with its terms, where the order is sent. */
    supplier: Generated<PackageSupplier>;
    /** eSIMs of the package (migration 0047): total_minor is quantity x its price. */
    quantity: Generated<number>;
  };
  /** Tombstones of carts purged after expiry (migration 0004): their keys answer 410, not 404. */
  expired_carts: { cart_key: string; partner_id: string; expired_at: Date; purged_at: Timestamp };
  orders: {
    order_id: string;
    seq: Generated<number>;
    partner_id: string;
    type: "esim" | "topup";
    status: "pending" | "completed" | "failed" | "refunded";
    cart_key: string | null;
    package_id: string;
    external_package_id: string;
    /** The package's terms as reserved (cart) or offered (top-up row): what the carrier is asked for. */
    data_mb: number | null;
    validity_days: number;
    start_date: string | null;
    total_minor: number;
    currency: string;
    client_reference: string | null;
    email: string;
    phone: string;
    first_name: string;
    last_name: string;
    iccid: string | null;
    failure_code: string | null;
    failure_detail: string | null;
    /** What the carrier said when it refused (migration 0003): for the operator, never for partners. */
    carrier_refusal: string | null;
    lease_until: Date | null;
    lease_token: string | null;
    /** The api_processes row of the lease's holder (migration 0021); null: ended by expiry only. */
    lease_holder: string | null;
    created_at: Timestamp;
    resolved_at: Date | null;
    /** When the order was refunded (migration 0008); null otherwise. */
    refunded_at: Date | null;
    /** When a refund was asked for (migration 0019): set while it is under way, kept once refunded. */
    refund_requested_at: Date | null;
    /** When the resolver sweep may next drive this pending order (migration 0007). */
    next_resolve_at: Date;
    resolve_attempts: Generated<number>;
    /** When the follow-up looks a failed order up at the carrier again (migration 0036); null: nothing owed. */
    carrier_check_after: Date | null;
    /** The follow-up's last word on an order failed without the carrier's (migration 0036). */
    carrier_check: "due" | "nothing_made" | "cancelled" | "refused" | "unavailable" | null;
    carrier_check_attempts: Generated<number>;
    /** A top-up's eSIM, set at insert and never changed (migration 0046): indexed, unlike `iccid`. */
    topup_iccid: string | null;
    /** The traveller's language, resolved from the submit's (migration 0042; earlier orders: en). */
    language: Generated<string>;
    /** Who provisions it (migration 0038), copied from the cart or top-up package; never changes. */
    supplier: Generated<PackageSupplier>;
    /** eSIMs bought (migration 0047); more than 1: a group order, with order_lines. */
    quantity: Generated<number>;
  };
  /** A group order's eSIMs (migration 0047), each provisioned and final on its own. */
  order_lines: {
    order_id: string;
    position: number;
    /** The carrier reference of this eSIM: `{order_id}-{position}`. */
    reference: string;
    status: Generated<"pending" | "completed" | "failed">;
    /** The traveller's, or null when the submit named none. */
    email: string | null;
    first_name: string | null;
    last_name: string | null;
    iccid: string | null;
    smdp_address: string | null;
    activation_code: string | null;
    carrier_refusal: string | null;
    resolved_at: Date | null;
  };
  /** The orders still pending (migration 0046): the resolver's and the metrics' list. */
  pending_orders: { order_id: string; created_at: Date };
  esims: {
    iccid: string;
    partner_id: string;
    order_id: string;
    package_id: string;
    smdp_address: string;
    activation_code: string;
    created_at: Timestamp;
    status: Generated<EsimStatus>;
    installed_at: Date | null;
    activated_at: Date | null;
    expires_at: Date | null;
    deleted_at: Date | null;
    usage_updated_at: Date | null;
    /** null: not pulled (expired, deleted, cancelled; migration 0012). */
    next_sync_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
    last_synced_at: Date | null;
    sync_failures: Generated<number>;
    last_sync_error: string | null;
    seq: Generated<number>;
    /** The secret part of the install page's address (migration 0042); replaced when revoked. */
    install_token: Generated<string>;
  };
  esim_bundles: {
    order_id: string;
    iccid: string;
    position: number;
    package_id: string;
    name: string;
    data_mb: number | null;
    validity_days: number;
    data_used_mb: Generated<number>;
    status: Generated<BundleStatus>;
    activated_at: Date | null;
    expires_at: Date | null;
    created_at: Timestamp;
  };
  events: {
    event_id: string;
    seq: Generated<number>;
    partner_id: string;
    type: string;
    data: unknown;
    dedup_key: string | null;
    created_at: Timestamp;
    /** When the webhook loop made its deliveries (migration 0009); null: not yet. */
    dispatched_at: Date | null;
  };
  webhook_endpoints: {
    endpoint_id: string;
    seq: Generated<number>;
    partner_id: string;
    url: string;
    description: string | null;
    event_types: string[];
    status: "enabled" | "disabled";
    disabled_reason: string | null;
    secret_sealed: string;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: Date | null;
    /** Older replaced secrets still signing, newest first (migration 0018). */
    earlier_secrets: ColumnType<Array<{ sealed: string; expires_at: string }>, string | undefined, string>;
    failing_since: Date | null;
    created_at: Timestamp;
  };
  webhook_deliveries: {
    delivery_id: string;
    seq: Generated<number>;
    endpoint_id: string;
    partner_id: string;
    event_id: string;
    event_type: string;
    status: "pending" | "succeeded" | "failed";
    attempts: number;
    last_attempt_at: Date | null;
    next_attempt_at: Date | null;
    last_response_status: number | null;
    last_error: string | null;
    leased_until: Date | null;
    lease_token: string | null;
    created_at: Timestamp;
  };
  purchases: {
    order_id: string;
    position: number;
    package_id: string;
    iccid: string;
    smdp_address: string;
    activation_code: string;
    start_date: string | null;
  };
  idempotency_keys: {
    partner_id: string;
    idempotency_key: string;
    fingerprint: Buffer;
    state: "running" | "completed";
    order_id: string | null;
    request_id: string;
    response_status: number | null;
    response_body: string | null;
    created_at: Timestamp;
    expires_at: Date;
    /** The order a refund key refunds (migration 0008); null for a top-up key. */
    refund_of: string | null;
  };
  /** Refund intents and their outcome (migration 0008). */
  order_refunds: {
    order_id: string;
    partner_id: string;
    state: "refunding" | "refunded";
    lease_until: Date | null;
    lease_token: string | null;
    /** The api_processes row of the lease's holder (migration 0021). */
    lease_holder: string | null;
    attempts: Generated<number>;
    last_error: string | null;
    created_at: Timestamp;
    refunded_at: Date | null;
    /** Who asked for the refund, for its audit entry (migration 0027); null before it. */
    requested_by_type: "user" | "api_key" | "operator" | "system" | null;
    requested_by_id: string | null;
    requested_by_email: string | null;
    requested_by_ip: string | null;
    requested_reason: string | null;
  };
  /** One per confirmation email sent: per order, or per traveller of a group (position, migration 0047). */
  email_deliveries: {
    order_id: string;
    position: Generated<number>;
    message_id: string;
    recipient: string;
    delivered_at: Timestamp;
  };
  /** Resent confirmation emails (migration 0029): the outbox and the log of each resend. */
  email_resends: {
    email_id: string;
    order_id: string;
    partner_id: string;
    recipient: string;
    idempotency_key: string | null;
    /** Sent to another address than the order's: counted by the partner's cap (migration 0034). */
    to_other_address: Generated<boolean>;
    created_at: Generated<Timestamp>;
    due_at: Generated<Timestamp>;
    attempts: Generated<number>;
    lease_token: string | null;
    last_error: string | null;
    message_id: string | null;
    sent_at: Timestamp | null;
  };
  console_sessions: {
    session_hash: Buffer;
    kind: "partner" | "operator";
    user_id: string;
    partner_id: string | null;
    stage: Generated<"signed_in" | "second_factor" | "enrol_second_factor">;
    created_at: Timestamp;
    last_seen_at: Timestamp;
    expires_at: Date;
  };
  /** People (migration 0023): partner and operator users. */
  users: {
    user_id: string;
    realm: "partner" | "operator";
    partner_id: string | null;
    email: string;
    name: Generated<string>;
    role: string;
    status: Generated<"invited" | "active" | "disabled">;
    password_hash: string | null;
    totp_secret_sealed: Buffer | null;
    totp_last_step: string | null;
    created_at: Timestamp;
    last_sign_in_at: Date | null;
  };
  user_tokens: {
    token_hash: Buffer;
    user_id: string;
    kind: "invitation" | "password_reset";
    created_at: Timestamp;
    expires_at: Date;
    used_at: Date | null;
  };
  recovery_codes: { user_id: string; code_hash: Buffer; used_at: Date | null };
  passkeys: {
    credential_id: string;
    user_id: string;
    public_key: Buffer;
    counter: Generated<string>;
    transports: Generated<string[]>;
    name: Generated<string>;
    created_at: Timestamp;
    last_used_at: Date | null;
  };
  /** The second factor's short-lived state (migration 0025), tied to a console session. */
  webauthn_challenges: {
    session_hash: Buffer;
    ceremony: "registration" | "authentication";
    challenge: string;
    expires_at: Date;
  };
  totp_enrolments: { session_hash: Buffer; user_id: string; secret_sealed: Buffer; expires_at: Date };
  sso_connections: {
    partner_id: string;
    issuer: string;
    client_id: string;
    client_secret_sealed: Buffer;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  sso_domains: { domain: string; partner_id: string };
  /** A sign-in with SSO under way (migration 0026): taken once by the callback, within 10 minutes. */
  sso_attempts: {
    attempt_hash: Buffer;
    partner_id: string;
    code_verifier: string;
    state: string;
    nonce: string;
    redirect_uri: string;
    ip: string;
    created_at: Timestamp;
    expires_at: Date;
  };
  sign_in_failures: { failure_id: Generated<string>; subject: string; failed_at: Timestamp };
  /** The audit log (migration 0023): one row per change, in the transaction that made it. */
  audit_log: {
    audit_seq: Generated<string>;
    audit_id: string;
    created_at: Timestamp;
    partner_id: string | null;
    actor_type: "user" | "api_key" | "operator" | "system";
    actor_id: string | null;
    actor_email: string | null;
    action: string;
    target_type: string;
    target_id: string | null;
    ip: string | null;
    details: Generated<unknown>;
  };
  /**
   * Processes alive (migration 0007): the heartbeat that splits rate limits between those serving
   * the API (serves_api) and says whether a lease's holder is still there (migration 0021).
   */
  api_processes: {
    process_id: string;
    started_at: Timestamp;
    seen_at: Timestamp;
    serves_api: Generated<boolean>;
  };
  /** A supplier's bearer token, sealed, shared by every process (migration 0032). */
  supplier_tokens: {
    supplier: "airalo" | "esimgo";
    access_token_sealed: string;
    expires_at: Timestamp;
    refreshed_at: Timestamp;
  };
  /** The Airalo adapter's intent per reference, written before each POST (migration 0032). */
  airalo_orders: {
    reference: string;
    kind: "sim" | "topup";
    package_id: string;
    iccid: string | null;
    data_mb: number | null;
    requested_at: Date | null;
    posts: Generated<number>;
    airalo_order_id: string | null;
    smdp_address: string | null;
    matching_id: string | null;
    refusal: string | null;
    answered_at: Date | null;
    refund_requested_at: Date | null;
    refund_id: string | null;
    created_at: Timestamp;
  };
  /** The eSIM Go adapter's intent per reference, written before each POST (migration 0033). */
  esimgo_orders: {
    reference: string;
    kind: "esim" | "topup";
    item: string;
    iccid: string | null;
    requested_at: Date | null;
    posts: Generated<number>;
    order_reference: string | null;
    smdp_address: string | null;
    matching_id: string | null;
    refusal: string | null;
    answered_at: Date | null;
    ambiguous_at: Date | null;
    customer_ref_set: Generated<boolean>;
    refund_requested_at: Date | null;
    refunded_at: Date | null;
    refund_refusal: string | null;
    created_at: Timestamp;
  };
  /** Confirmation emails to send (migration 0007): a row per order until its delivery is recorded. */
  email_outbox: {
    order_id: string;
    /** The traveller's line it goes to (migration 0047); 0 for an order's one email. */
    position: Generated<number>;
    due_at: Timestamp;
    attempts: Generated<number>;
    lease_token: string | null;
    last_error: string | null;
  };
};
