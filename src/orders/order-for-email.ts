// What the confirmation email (notifications/send-confirmation-emails.ts) reads of orders: given
// to the email sweep by the server, since notifications sit below orders and never read their tables.
import { packageNames } from "../catalog/find-packages.ts";
import type { Executor } from "../db/executor.ts";
import type { OrderForEmail } from "../notifications/send-confirmation-emails.ts";
import { installPageUrl } from "../shared/install-kit.ts";
import { ordersWithFirstPurchase } from "./orders.sql.ts";

/**
 * Each order found, with its first purchase, that purchase's package name and its eSIM's install
 * page (under `public_base_url`, PUBLIC_BASE_URL): two queries a batch.
 */
export async function ordersForEmail(
  db: Executor,
  order_ids: string[],
  public_base_url: string,
): Promise<Map<string, OrderForEmail>> {
  const rows = await ordersWithFirstPurchase(db, order_ids);
  const names = await packageNames(
    db,
    rows.flatMap((row) => (row.package_id === null ? [] : [row.package_id])),
  );
  return new Map(
    rows.map(({ order_id, package_id, install_token, ...rest }) => [
      order_id,
      {
        ...rest,
        package_name: package_id === null ? null : (names.get(package_id) ?? null),
        install_page_url: install_token === null ? null : installPageUrl(public_base_url, install_token),
      },
    ]),
  );
}
