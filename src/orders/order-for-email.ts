// What the confirmation email (notifications/send-confirmation-emails.ts) reads of orders: given
// to the email sweep by the server, since notifications sit below orders and never read their tables.
import { packageNames } from "../catalog/find-packages.ts";
import type { Executor } from "../db/executor.ts";
import type { GroupEsimForEmail, OrderForEmail } from "../notifications/send-confirmation-emails.ts";
import { installPageUrl } from "../shared/install-kit.ts";
import { groupEsimsOf, ordersWithFirstPurchase } from "./orders.sql.ts";

/**
 * Each order found, with its first purchase, that purchase's package name and its eSIM's install
 * page (under `public_base_url`, PUBLIC_BASE_URL), and a group order's every eSIM with its
 * traveller: three queries a batch.
 */
export async function ordersForEmail(
  db: Executor,
  order_ids: string[],
  public_base_url: string,
): Promise<Map<string, OrderForEmail>> {
  const rows = await ordersWithFirstPurchase(db, order_ids);
  const groups = rows.filter((row) => row.quantity > 1).map((row) => row.order_id);
  const [names, group_esims] = await Promise.all([
    packageNames(
      db,
      rows.flatMap((row) => (row.package_id === null ? [] : [row.package_id])),
    ),
    groupEsimsOf(db, groups),
  ]);
  const page = (token: string | null) => (token === null ? null : installPageUrl(public_base_url, token));
  const esims = new Map<string, GroupEsimForEmail[]>();
  for (const { order_id, install_token, email, first_name, ...esim } of group_esims) {
    const of_order = esims.get(order_id) ?? [];
    of_order.push({
      ...esim,
      install_page_url: page(install_token),
      traveller: email === null || first_name === null ? null : { email, first_name },
    });
    esims.set(order_id, of_order);
  }
  return new Map(
    rows.map(({ order_id, package_id, install_token, ...rest }) => [
      order_id,
      {
        ...rest,
        package_name: package_id === null ? null : (names.get(package_id) ?? null),
        install_page_url: page(install_token),
        esims: esims.get(order_id) ?? [],
      },
    ]),
  );
}
