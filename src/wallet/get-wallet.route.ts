// GET /v1/profile/wallet: the partner's prepaid balance.
import { Type } from "typebox";
import type { WalletBalance } from "../ledger/accounts.ts";
import { endpoint } from "../shared/endpoint.ts";
import { errorResponses, Money, money, PARTNER_SECURITY } from "../shared/schemas.ts";
import { getWalletBalance } from "./get-wallet-balance.ts";

export const WalletResponse = Type.Object(
  {
    balance: Money,
    pending: Type.Object(Money.properties, {
      additionalProperties: false,
      description: "Held by purchases the carrier has not confirmed yet; not spendable, not yet charged.",
    }),
    low_balance_threshold: Type.Union([Money, Type.Null()], {
      description:
        "A wallet.balance_low event is recorded each time `balance` falls below this; null: the alert is off.",
    }),
  },
  { additionalProperties: false },
);

export function renderWallet(wallet: WalletBalance) {
  const threshold = wallet.low_balance_threshold_minor;
  return {
    balance: money(wallet.available_minor, wallet.currency),
    pending: money(wallet.pending_debits_minor, wallet.currency),
    low_balance_threshold: threshold === null ? null : money(threshold, wallet.currency),
  };
}

export const getWalletRoute = endpoint({
  method: "GET",
  url: "/profile/wallet",
  schema: {
    operationId: "getWallet",
    summary: "Your prepaid wallet balance",
    description: "`balance` is what you can spend now: credits minus completed purchases and holds.",
    tags: ["Wallet"],
    security: PARTNER_SECURITY,
    response: {
      200: WalletResponse,
      ...errorResponses("unauthorized", "wrong_environment", "ip_not_allowed"),
    },
  },
  handler: (ctx) => async (request) =>
    renderWallet(await getWalletBalance(ctx.db, request.partner!.partner_id)),
});
