// GET /v1/profile/wallet, GET /v1/profile/wallet/transactions (JSON pages or CSV),
// PUT /v1/profile/wallet/low-balance-alert
import { CursorList } from "../core/pagination.ts";
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  ListWalletTransactionsParams,
  SetLowBalanceAlertParams,
  Wallet as WalletBody,
  WalletTransaction,
  WalletTransactionPage,
  WalletTransactionsCsvParams,
} from "../types.ts";

const TRANSACTIONS = "/v1/profile/wallet/transactions";

export class Wallet {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  get(options?: RequestOptions): Promise<WalletBody> {
    return this.#transport.request({ method: "GET", path: "/v1/profile/wallet", idempotent: true }, options);
  }

  /**
   * The statement, newest first, every page: settled money only, each row with `balance_after`.
   * `from` and `to` (YYYY-MM-DD, UTC days, both included) bound it.
   */
  transactions(
    params: Omit<ListWalletTransactionsParams, "cursor"> = {},
    options: RequestOptions = {},
  ): CursorList<WalletTransaction> {
    return new CursorList(
      (cursor, pageOptions) => this.transactionsPage({ ...params, cursor }, pageOptions),
      options,
    );
  }

  /** One page of the statement, for callers that keep the cursor themselves. */
  transactionsPage(
    params: ListWalletTransactionsParams = {},
    options?: RequestOptions,
  ): Promise<WalletTransactionPage> {
    return this.#transport.request(
      { method: "GET", path: TRANSACTIONS, query: params, idempotent: true },
      options,
    );
  }

  /**
   * Every row of the range as one CSV text, header first (the API refuses a range of too many rows
   * with 422 `statement_too_large`: narrow `from` and `to`).
   */
  transactionsCsv(params: WalletTransactionsCsvParams = {}, options?: RequestOptions): Promise<string> {
    const query = { from: params.from, to: params.to };
    return this.#transport.request(
      { method: "GET", path: TRANSACTIONS, query, idempotent: true, accept: "text/csv", as: "text" },
      options,
    );
  }

  /**
   * A `wallet.balance_low` event is recorded each time the balance falls below `threshold_minor`
   * (null turns the alert off). Answers the wallet. Retried: setting the same value twice is harmless.
   */
  setLowBalanceAlert(params: SetLowBalanceAlertParams, options?: RequestOptions): Promise<WalletBody> {
    return this.#transport.request(
      { method: "PUT", path: "/v1/profile/wallet/low-balance-alert", body: params, idempotent: true },
      options,
    );
  }
}
