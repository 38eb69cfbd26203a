// GET /v1/esims, GET /v1/esims/{iccid}, GET /v1/esims/{iccid}/qr.png,
// POST /v1/sandbox/esims/{iccid}/simulate
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type { Esim, EsimPage, EsimQrParams, ListEsimsParams, SimulateEsimParams } from "../types.ts";

const eSimPath = (iccid: string) => `/v1/esims/${encodeURIComponent(iccid)}`;

export class Esims {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Your eSIMs, newest first, every page: `for await (const esim of client.esims.list({ status: "active" }))`.
   * Filters: `status`, and `client_reference` of the order that bought the eSIM.
   */
  list(params: Omit<ListEsimsParams, "cursor"> = {}, options: RequestOptions = {}): CursorList<Esim> {
    return new CursorList((cursor, pageOptions) => this.page({ ...params, cursor }, pageOptions), options);
  }

  /** One page, for callers that keep the cursor themselves. */
  page(params: ListEsimsParams = {}, options?: RequestOptions): Promise<EsimPage> {
    return this.#transport.request(
      { method: "GET", path: "/v1/esims", query: params, idempotent: true },
      options,
    );
  }

  /** One eSIM: status, usage (with `usage.updated_at`, how fresh it is), bundles and install links. */
  get(iccid: string, options?: RequestOptions): Promise<Esim> {
    return this.#transport.request({ method: "GET", path: eSimPath(iccid), idempotent: true }, options);
  }

  /** The QR code of `installation.qr_code` as PNG bytes (`size` pixels square, default 512). */
  qrPng(iccid: string, params: EsimQrParams = {}, options?: RequestOptions): Promise<Uint8Array> {
    return this.#transport.request(
      {
        method: "GET",
        path: `${eSimPath(iccid)}/qr.png`,
        query: { size: params.size },
        idempotent: true,
        accept: "image/png",
        as: "bytes",
      },
      options,
    );
  }

  /**
   * Sandbox only: makes the simulated carrier do `event` to the eSIM, as a device would, and
   * answers the eSIM after it. Never retried: a repeated `use_data` uses the data twice.
   */
  simulate(iccid: string, params: SimulateEsimParams, options?: RequestOptions): Promise<Esim> {
    const path = `/v1/sandbox/esims/${encodeURIComponent(iccid)}/simulate`;
    return this.#transport.request({ method: "POST", path, body: params, idempotent: false }, options);
  }
}
