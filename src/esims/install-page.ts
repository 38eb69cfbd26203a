// The traveller's install page (contract "Travellers"), as the esims domain answers it: the eSIM
// found by its page's token, rendered as its partner sees it (the same usage and validity as
// GET /v1/esims/{iccid}), with what the page needs besides; and the revocation of a page.
import type { Executor } from "../db/executor.ts";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { installPageUrl } from "../shared/install-kit.ts";
import { esimChanged } from "./esim-cache.ts";
import { esimByInstallToken, replaceInstallToken } from "./esims.sql.ts";
import { requireValidIccid } from "./iccid-param.ts";
import { type EsimBody, renderEsim } from "./render-esim.ts";

/** A token as migration 0042 draws them: 64 lower-case hex digits (256 bits, 244 of them random). */
export const INSTALL_TOKEN_PATTERN = /^[0-9a-f]{64}$/;

export type InstallPage = {
  esim: EsimBody;
  partner_id: string;
  /** The order's language (Order.language), unless the page is asked for another. */
  language: string;
  /** The package's name: the eSIM's first bundle's. */
  package_name: string;
  /** The order that bought the eSIM was refunded: its eSIM is cancelled, nothing is left to install. */
  refunded: boolean;
};

/** The page of this token, or null: a malformed token is not looked up. */
export async function findInstallPage(
  db: Executor,
  install_token: string,
  public_base_url: string,
): Promise<InstallPage | null> {
  if (!INSTALL_TOKEN_PATTERN.test(install_token)) return null;
  const row = await esimByInstallToken(db, install_token);
  if (row === null) return null;
  const esim = renderEsim(row, row.bundles, public_base_url);
  return {
    esim,
    partner_id: row.partner_id,
    language: row.language,
    package_name: esim.bundles[0]?.name ?? "eSIM",
    refunded: row.order_status === "refunded" || row.status === "cancelled",
  };
}

/**
 * Revokes the eSIM's install page: its address stops answering at once (404), and the eSIM gets a
 * new one, returned, for the partner to give the traveller if it wants to. For a link sent to the
 * wrong person, or one the traveller shared. The operator's CLI calls it (`esims revoke-install-page`).
 */
export async function revokeInstallPage(
  ctx: Pick<AppContext, "db" | "pool">,
  partner_id: string,
  iccid: string,
  public_base_url: string,
): Promise<{ install_page_url: string }> {
  requireValidIccid(iccid);
  const token = await replaceInstallToken(ctx.db, partner_id, iccid);
  if (token === null) throw new ApiError("esim_not_found", `No eSIM ${iccid} for this partner.`);
  // Other processes hear of it by NOTIFY; this one reads its own write at once.
  esimChanged(ctx.pool, iccid);
  return { install_page_url: installPageUrl(public_base_url, token) };
}
