// PUT /v1/profile/wallet/low-balance-alert: the threshold under which wallet.balance_low fires.
import { Type } from "typebox";
import { MAX_AMOUNT_MINOR } from "../ledger/accounts.ts";
import { endpoint } from "../shared/endpoint.ts";
import { actorOf } from "../shared/http-types.ts";
import { errorResponses, PARTNER_SECURITY } from "../shared/schemas.ts";
import { renderWallet, WalletResponse } from "./get-wallet.route.ts";
import { setLowBalanceAlert } from "./set-low-balance-alert.ts";

const AlertBody = Type.Object(
  {
    threshold_minor: Type.Union([Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_MINOR }), Type.Null()], {
      description: "In the wallet's minor unit; null turns the alert off.",
    }),
  },
  { additionalProperties: false },
);

export const setLowBalanceAlertRoute = endpoint({
  method: "PUT",
  url: "/profile/wallet/low-balance-alert",
  schema: {
    operationId: "setLowBalanceAlert",
    summary: "Set or clear your low-balance alert",
    description:
      "One `wallet.balance_low` event is recorded each time a purchase takes `balance` from at or above the " +
      "threshold to below it. Spending more while below records nothing; a credit back above re-arms it.",
    tags: ["Wallet"],
    security: PARTNER_SECURITY,
    body: AlertBody,
    response: {
      200: WalletResponse,
      ...errorResponses(
        "unauthorized",
        "wrong_environment",
        "insufficient_scope",
        "partner_suspended",
        "ip_not_allowed",
        "invalid_request",
      ),
    },
  },
  handler: (ctx) => async (request) =>
    renderWallet(
      await setLowBalanceAlert(
        ctx.db,
        request.partner!.partner_id,
        request.body.threshold_minor,
        actorOf(request),
      ),
    ),
});
