// POST /v2/orders/topups [DOC:submit-top-up-order-11883026e0], [SPEC top-up-esim]: a top-up order
// (`type: "topup"`, no `sims` array) for a package listed by GET /v2/sims/{iccid}/topups.
import { inTransaction } from "../../db/pool.ts";
import { creditCents, debitCredit, insertOrder, selectSim } from "./airalo.sql.ts";
import { type Answer, businessError, invalid, ok } from "./answers.ts";
import { type Fields, text } from "./bodies.ts";
import { findPackage, topupsFor } from "./catalog.ts";
import type { Context } from "./context.ts";
import { orderShape } from "./shapes.ts";

export async function topUp(context: Context, fields: Fields): Promise<Answer> {
  const iccid = text(fields, "iccid");
  const packageId = text(fields, "package_id");
  const description = text(fields, "description");
  const missing: Record<string, string> = {};
  if (iccid === null) missing.iccid = "The iccid field is required.";
  if (packageId === null) missing.package_id = "The package id field is required.";
  if (description !== null && description.length > 255)
    missing.description = "The description may not be greater than 255 characters.";
  if (Object.keys(missing).length > 0) return invalid(missing);
  const pkg = findPackage(packageId!)?.pkg;
  return inTransaction(context.pool, async (client) => {
    // The eSIM's row lock orders concurrent top-ups of one eSIM (and a recycling from /control).
    const sim = await selectSim(client, iccid!, true);
    // UNCONFIRMED: an ICCID that is not the partner's; Laravel's `exists` rule wording.
    if (!sim) return invalid({ iccid: "The selected iccid is invalid." });
    if (sim.recycled_at) return businessError(73, sim.iccid);
    if (!pkg || !topupsFor(sim.package_id).some((offered) => offered.id === pkg.id))
      return invalid({ package_id: "invalid topup package" });
    if ((await debitCredit(client, pkg.net_price_cents)) === null)
      return businessError(
        11,
        `the top-up costs ${(pkg.net_price_cents / 100).toFixed(2)} USD, the balance is ${((await creditCents(client)) / 100).toFixed(2)} USD`,
      );
    const order = await insertOrder(client, {
      type: "topup",
      package_id: pkg.id,
      quantity: 1,
      // The docs' examples answer "Topup (<iccid>)" even when a description was sent (UNCONFIRMED
      // whether Airalo keeps it): the fake keeps what was sent, and uses that text otherwise.
      description: description ?? `Topup (${sim.iccid})`,
      topup_iccid: sim.iccid,
      request_id: null,
      brand_settings_name: null,
      price_cents: pkg.price_cents,
      net_price_cents: pkg.net_price_cents,
    });
    // quantity "1" (a string), as the older example has it: Airalo's typing is loose (README).
    return ok({ ...orderShape(order, null), quantity: "1" });
  });
}
