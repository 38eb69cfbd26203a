// A sandbox supplier's built-in fake, started the first time one of its packages is bought,
// looked up, pulled or refunded, not at every start of the service: most sandbox processes never
// sell a supplier's package, and a start-up that also starts two HTTP servers is slower for all.
// The adapter in front of it is built once the fake listens (its URL is known only then).
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
} from "../carrier/carrier.ts";

export type Started = { carrier: Carrier; close: () => Promise<void> };

export class StartOnFirstUse implements Carrier {
  readonly operation_ms: number;
  readonly #name: string;
  readonly #supplier: PackageSupplier;
  readonly #start: () => Promise<Started>;
  #started: Promise<Started> | null = null;
  #closed = false;

  /** `operation_ms`: the adapter's, known before it is built (it depends on the timeout only). */
  constructor(name: string, supplier: PackageSupplier, operation_ms: number, start: () => Promise<Started>) {
    this.#name = name;
    this.#supplier = supplier;
    this.operation_ms = operation_ms;
    this.#start = start;
  }

  /**
   * The started adapter, or why it could not start: nothing was sent to the supplier then, so the
   * caller's outcome is "unavailable" and the next call tries again.
   */
  async #carrier(): Promise<Carrier | string> {
    if (this.#closed) return `the sandbox ${this.#name} simulation is closed`;
    this.#started ??= this.#start();
    try {
      return (await this.#started).carrier;
    } catch (error) {
      this.#started = null;
      return `the sandbox ${this.#name} simulation did not start: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Closes the fake if it was started; later calls answer unavailable. */
  async close(): Promise<void> {
    this.#closed = true;
    const started = this.#started;
    this.#started = null;
    if (started !== null) await (await started.catch(() => null))?.close();
  }

  /** The fake it starts is its supplier's: served, whether or not it has started yet. */
  serves(supplier: PackageSupplier): boolean {
    return supplier === this.#supplier;
  }

  async provisionProfile(
    request: ForSupplier<ProvisionRequest>,
  ): Promise<CarrierOutcome<ProvisionedProfile>> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.provisionProfile(request);
  }

  async topUp(request: ForSupplier<TopUpRequest>): Promise<CarrierOutcome<TopUpResult>> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.topUp(request);
  }

  async lookUpOutcome(reference: string, supplier: PackageSupplier): Promise<LookedUpOutcome> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.lookUpOutcome(reference, supplier);
  }

  async cancelProfile(request: ForSupplier<CancelRequest>): Promise<CancelOutcome> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.cancelProfile(request);
  }

  async cancelBundle(request: ForSupplier<CancelRequest>): Promise<CancelOutcome> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.cancelBundle(request);
  }

  async settleHeldCancel(
    request: ForSupplier<CancelRequest>,
    verdict: CancelVerdict,
  ): Promise<SettledCancel> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return "not_held";
    return carrier.settleHeldCancel(request, verdict);
  }

  async esimState(iccid: string, supplier: PackageSupplier): Promise<EsimStateOutcome> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.esimState(iccid, supplier);
  }

  async simulate(iccid: string, event: SimulatedEvent, supplier: PackageSupplier): Promise<EsimStateOutcome> {
    const carrier = await this.#carrier();
    if (typeof carrier === "string") return { kind: "unavailable", reason: carrier };
    return carrier.simulate(iccid, event, supplier);
  }
}
