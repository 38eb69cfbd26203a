// The operator's view of a partner (GET /admin/partners, GET /admin/partners/{partner_id}): who it
// is, its standing (issue 32) and its wallet's balance, read through the ledger's own function.
import { type Static, Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import { type WalletRow, walletOf } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import { Money, money } from "../shared/schemas.ts";
import { rfc3339 } from "../shared/time.ts";
import type { PartnerSummary } from "./partners.sql.ts";

export const PARTNER_STATUSES = ["active", "suspended"] as const;
export type PartnerStatus = (typeof PARTNER_STATUSES)[number];

export const AdminPartner = Type.Object(
  {
    partner_id: Type.String(),
    name: Type.String(),
    status: Type.Union([Type.Literal("active"), Type.Literal("suspended")], {
      description:
        "`suspended`: the partner's API keys and console people may read, and every write answers 403 " +
        "`partner_suspended` but those that only take access away (deleting a webhook endpoint, revoking a key, " +
        "disabling a person); orders already pending still finish.",
    }),
    suspended_reason: Type.Union([Type.String(), Type.Null()], {
      description: "The operator's reason, shown on the partner's console; null while active.",
    }),
    suspended_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    balance: Money,
    // Money held by pending orders, not in `balance` (as `pending` of GET /v1/profile/wallet).
    held: Money,
    created_at: Type.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);
export type AdminPartner = Static<typeof AdminPartner>;

/** The partner as the operator API shows it, with its wallet's balance and holds. */
export async function renderAdminPartner(db: Executor, partner: PartnerSummary): Promise<AdminPartner> {
  return adminPartnerOf(partner, await walletOf(db, partner.partner_id));
}

/** The partner with its wallet's balance, the wallet read beforehand (walletsOf for a page). */
export function adminPartnerOf(partner: PartnerSummary, wallet: WalletRow | null | undefined): AdminPartner {
  // Every partner is created with its wallet in one transaction: a missing one is a broken invariant.
  if (!wallet) throw new ApiError("internal_error", "wallet missing");
  return {
    partner_id: partner.partner_id,
    name: partner.name,
    status: partner.status,
    suspended_reason: partner.suspended_reason,
    suspended_at: partner.suspended_at === null ? null : rfc3339(partner.suspended_at),
    balance: money(wallet.available_minor, wallet.currency),
    held: money(wallet.pending_debits_minor, wallet.currency),
    created_at: rfc3339(new Date(partner.created_at)),
  };
}
