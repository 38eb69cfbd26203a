// The Carrier port over every supplier this process can buy from (contract "Suppliers (operator
// side)"): each call goes to the adapter of the supplier it names, the carrier's (our carrier
// protocol and ES2+), Airalo's or eSIM Go's.
//
// Why one order's calls can never reach two suppliers: the supplier is not looked up here, it is
// passed by the caller, and every caller reads it from one place, the order's own row
// (`orders.supplier`; for an eSIM, the row of the order that made it). That column is copied from
// the cart (or the top-up's package) in the transaction that creates the order and is never
// written again: no statement updates it and a trigger refuses any that would (migration 0038).
// So a retry, the resolver, a crash recovery, an operator's settle, the follow-up on a failed
// order and a refund all name the same supplier for a reference; a catalog change (a package
// retired, re-imported, repriced) touches the catalog row only. Resolving the supplier here from
// the adapters' intent tables instead would answer "the carrier" for an order whose intent is not
// written yet, which is exactly the moment a lookup must not guess.
import type {
  CancelOutcome,
  CancelRequest,
  CancelVerdict,
  Carrier,
  CarrierOutcome,
  EsimStateOutcome,
  ForSupplier,
  LookedUpOutcome,
  PackageSupplier,
  ProvisionedProfile,
  ProvisionRequest,
  SettledCancel,
  SimulatedEvent,
  TopUpRequest,
  TopUpResult,
} from "./carrier.ts";

/** The adapters a process has: the carrier always; a supplier without its settings is null. */
export type SupplierAdapters = { carrier: Carrier; airalo: Carrier | null; esimgo: Carrier | null };

/** Why a supplier has no adapter in this process, for its refusals (config.ts names the settings). */
export type NotConfiguredReasons = Partial<Record<Exclude<PackageSupplier, "carrier">, string>>;

const SUPPLIER_NAMES: Record<PackageSupplier, string> = {
  carrier: "the carrier",
  airalo: "Airalo",
  esimgo: "eSIM Go",
};

export class SupplierRouter implements Carrier {
  readonly #adapters: SupplierAdapters;
  readonly #why: NotConfiguredReasons;
  readonly #log: (message: string) => void;
  /** The longest operation of any adapter: an order's lease outlasts whichever supplier it calls. */
  readonly operation_ms: number;

  constructor(adapters: SupplierAdapters, why: NotConfiguredReasons, log: (message: string) => void) {
    this.#adapters = adapters;
    this.#why = why;
    this.#log = log;
    const configured = [adapters.carrier, adapters.airalo, adapters.esimgo].filter((a) => a !== null);
    this.operation_ms = Math.max(...configured.map((adapter) => adapter.operation_ms));
  }

  /** Only a configured supplier's purchases, top-ups and refunds are started (Carrier.serves). */
  serves(supplier: PackageSupplier): boolean {
    const adapter = this.#adapters[supplier];
    return adapter?.serves(supplier) === true;
  }

  /** The supplier's adapter, or the reason it has none (logged: the operator's to fix). */
  #adapter(supplier: PackageSupplier, call: string, reference: string): Carrier | string {
    const adapter = this.#adapters[supplier];
    if (adapter !== null && adapter !== undefined) return adapter;
    const why = supplier === "carrier" ? "no carrier" : (this.#why[supplier] ?? "its settings are missing");
    const reason = `${SUPPLIER_NAMES[supplier] ?? supplier} is not configured in this process (${why})`;
    this.#log(`${call} of ${reference} not sent: ${reason}`);
    return reason;
  }

  // A supplier not configured here is unavailable, never a refusal: a new purchase, top-up or refund
  // is refused before it is created (serves), so a call that reaches here is about an order sent
  // when the supplier was configured (a re-drive after a restart without its settings), which the
  // supplier may have made and charged. Refused would fail it and void its hold; unavailable keeps
  // it pending until the supplier is configured again or the give-up path's carrier check.
  async provisionProfile(
    request: ForSupplier<ProvisionRequest>,
  ): Promise<CarrierOutcome<ProvisionedProfile>> {
    const adapter = this.#adapter(request.supplier, "provisioning", request.reference);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.provisionProfile(request);
  }

  async topUp(request: ForSupplier<TopUpRequest>): Promise<CarrierOutcome<TopUpResult>> {
    const adapter = this.#adapter(request.supplier, "top-up", request.reference);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.topUp(request);
  }

  // A lookup cannot say "nothing was made" for a supplier it cannot ask (it may have been
  // configured when the order was sent): unknown, so the order stays as it is.
  async lookUpOutcome(reference: string, supplier: PackageSupplier): Promise<LookedUpOutcome> {
    const adapter = this.#adapter(supplier, "lookup", reference);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.lookUpOutcome(reference, supplier);
  }

  // A refund already asked of the supplier (Airalo's under review) stays refunding, nothing credited
  // and nothing given up, until the supplier is configured again.
  async cancelProfile(request: ForSupplier<CancelRequest>): Promise<CancelOutcome> {
    const adapter = this.#adapter(request.supplier, "cancel", request.reference);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.cancelProfile(request);
  }

  async cancelBundle(request: ForSupplier<CancelRequest>): Promise<CancelOutcome> {
    const adapter = this.#adapter(request.supplier, "cancel", request.reference);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.cancelBundle(request);
  }

  async settleHeldCancel(
    request: ForSupplier<CancelRequest>,
    verdict: CancelVerdict,
  ): Promise<SettledCancel> {
    const adapter = this.#adapter(request.supplier, "held cancel", request.reference);
    if (typeof adapter === "string") return "not_held";
    return adapter.settleHeldCancel(request, verdict);
  }

  async esimState(iccid: string, supplier: PackageSupplier): Promise<EsimStateOutcome> {
    const adapter = this.#adapter(supplier, "state pull", iccid);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.esimState(iccid, supplier);
  }

  async simulate(iccid: string, event: SimulatedEvent, supplier: PackageSupplier): Promise<EsimStateOutcome> {
    const adapter = this.#adapter(supplier, "simulation", iccid);
    if (typeof adapter === "string") return { kind: "unavailable", reason: adapter };
    return adapter.simulate(iccid, event, supplier);
  }
}
