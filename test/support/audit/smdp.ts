// Invariant 9 (profiles from an SM-DP+, CARRIER_PROFILES=es2plus): the profiles the SM-DP+ released
// and did not take back are exactly the ICCIDs of our completed new-eSIM orders, one each, and no
// profile is left half-ordered (ALLOCATED, LINKED or CONFIRMED) once everything has settled.
import type { SmdpAudit } from "../smdp.ts";
import type { BreachList, OrderFacts } from "./facts.ts";

const LIVE = new Set(["RELEASED", "DOWNLOADED", "INSTALLED", "DELETED"]);
const HALF_ORDERED = ["ALLOCATED", "LINKED", "CONFIRMED"];

export function checkSmdpProfiles(found: BreachList, orders: readonly OrderFacts[], smdp: SmdpAudit): void {
  const live = new Map(smdp.released.filter((p) => LIVE.has(p.state)).map((p) => [p.iccid, p]));
  const completed = orders.filter((o) => o.type === "esim" && o.status === "completed");
  const ours = new Set<string>();
  for (const order of completed) {
    if (order.iccid === null) continue;
    if (ours.has(order.iccid)) found.add("smdp", `ICCID ${order.iccid} belongs to two completed orders`);
    ours.add(order.iccid);
    if (!live.has(order.iccid)) {
      found.add(
        "smdp",
        `order ${order.order_id}: its ICCID ${order.iccid} is not a released profile at the SM-DP+`,
      );
    }
  }
  for (const iccid of live.keys()) {
    if (!ours.has(iccid))
      found.add("smdp", `the SM-DP+ released ${iccid}, which no completed order of ours has`);
  }
  if (live.size !== completed.length) {
    found.add(
      "smdp",
      `${live.size} released profiles at the SM-DP+ for ${completed.length} completed eSIM orders`,
    );
  }
  for (const state of HALF_ORDERED) {
    const count = smdp.counts[state] ?? 0;
    if (count > 0) found.add("smdp", `${count} profiles left ${state} at the SM-DP+`);
  }
}
