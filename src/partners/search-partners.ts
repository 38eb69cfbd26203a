// Operator use case: the partners, newest first, by pages (GET /admin/partners, the console's list):
// found by a part of the name (case-insensitive) or a whole partner id, and by standing.
import { type Static, Type } from "typebox";
import type { Executor } from "../db/executor.ts";
import { walletsOf } from "../ledger/accounts.ts";
import { ApiError } from "../shared/errors.ts";
import { AdminPartner, adminPartnerOf, type PartnerStatus } from "./admin-partner.ts";
import { searchPartners } from "./partners.sql.ts";

export const MAX_PARTNER_PAGE = 100;
export const DEFAULT_PARTNER_PAGE = 20;
/** The longest `q`: a partner's name is at most 200 characters. */
export const MAX_PARTNER_QUERY_LENGTH = 200;

export const PartnerPage = Type.Object(
  {
    data: Type.Array(AdminPartner),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);
export type PartnerPage = Static<typeof PartnerPage>;

export type PartnerQuery = {
  q: string | null;
  status: PartnerStatus | null;
  limit: number;
  cursor: string | null;
};

// The cursor names the last partner of a page: its created_at in microseconds and its id.
const CURSOR = /^p1:(\d{1,20}):(ptr_[A-Za-z0-9_-]{16,64})$/;

function encodeCursor(created_us: string, partner_id: string): string {
  return Buffer.from(`p1:${created_us}:${partner_id}`).toString("base64url");
}

function decodeCursor(cursor: string): { created_us: string; partner_id: string } {
  const match = CURSOR.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match)
    throw new ApiError("invalid_request", "The cursor is not one this API returned.", {
      errors: [{ field: "cursor", code: "invalid_format", message: "is not a valid cursor" }],
    });
  return { created_us: match[1]!, partner_id: match[2]! };
}

export async function listPartnersPage(db: Executor, query: PartnerQuery): Promise<PartnerPage> {
  const q = query.q?.trim() ?? "";
  // A partner id is matched whole and as written (ids are case-sensitive); a name by any part.
  const rows = await searchPartners(db, {
    q: q === "" ? null : q,
    status: query.status,
    before: query.cursor === null ? null : decodeCursor(query.cursor),
    // One extra row tells whether another page exists, without a count.
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const has_more = rows.length > query.limit;
  const last = page.at(-1);
  // The page's wallets in one statement: a query per partner would take up to 100 pool connections.
  const wallets = await walletsOf(
    db,
    page.map((partner) => partner.partner_id),
  );
  return {
    data: page.map((partner) => adminPartnerOf(partner, wallets.get(partner.partner_id))),
    has_more,
    next_cursor: has_more && last ? encodeCursor(last.created_us, last.partner_id) : null,
  };
}
