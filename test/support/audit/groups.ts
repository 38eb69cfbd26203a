// Invariant 12 (issue 34): group orders, line by line. A group order (quantity > 1) is one order,
// one transfer, and one carrier provisioning per eSIM under the line's own reference
// (`{order_id}-{position}`), so the single-order checks (one delivery under the order's id, one
// purchase, one email to the order's address) do not apply to it; these do:
//  - its lines are exactly `quantity`, none pending once the order is final;
//  - completed: one posted transfer for the completed lines' price (total x quantity = held x made),
//    one eSIM and one purchase per completed line; failed: every line failed, the hold voided,
//    nothing made;
//  - each completed line's reference provisioned exactly once at the carrier, with the line's
//    ICCID; a failed line's never, and refused there; nothing provisioned for a pending line;
//  - emails: one delivery per completed line whose traveller was named, at the line's position and
//    to that traveller; without travellers one, at position 0, to the order's address; and what
//    reached the SMTP server went to those addresses, each of them at least once.
import type pg from "pg";
import type { SimulatorAudit } from "../simulator.ts";
import type { ReceivedMessage } from "../smtp.ts";
import { type BreachList, groupBy, type OrderFacts } from "./facts.ts";

export type LineFacts = {
  order_id: string;
  position: number;
  reference: string;
  status: "pending" | "completed" | "failed";
  iccid: string | null;
  email: string | null;
};

export type DeliveryFacts = { order_id: string; position: number; recipient: string };

/** A limit on the lines one audit reads: far above a run; reaching it is a breach. */
const MAX_LINES = 100_000;

export async function readLines(pool: pg.Pool): Promise<{ lines: LineFacts[]; deliveries: DeliveryFacts[] }> {
  const lines = await pool.query<LineFacts>(
    `select order_id, position, reference, status, iccid, email from order_lines
     order by order_id, position limit ${MAX_LINES + 1}`,
  );
  const deliveries = await pool.query<DeliveryFacts>(
    `select d.order_id, d.position, d.recipient from email_deliveries d
     join orders o on o.order_id = d.order_id where o.quantity > 1`,
  );
  return { lines: lines.rows, deliveries: deliveries.rows };
}

export function isGroup(order: OrderFacts): boolean {
  return order.quantity > 1;
}

/** The references the carrier may have provisioned for groups: their completed lines'. */
export function madeLineReferences(lines: readonly LineFacts[]): Set<string> {
  return new Set(lines.filter((line) => line.status === "completed").map((line) => line.reference));
}

export function checkGroups(
  found: BreachList,
  groups: readonly OrderFacts[],
  all: { lines: LineFacts[]; deliveries: DeliveryFacts[] },
  carrier: SimulatorAudit,
): void {
  if (all.lines.length > MAX_LINES) found.add("group", `more than ${MAX_LINES} order lines: not all audited`);
  const linesOf = groupBy(all.lines, (line) => line.order_id);
  const deliveriesOf = groupBy(all.deliveries, (delivery) => delivery.order_id);
  const provisioned = groupBy(carrier.provisionings, (p) => p.reference);
  const refused = groupBy(carrier.refusals, (r) => r.reference);
  for (const order of groups) {
    const what = `group order ${order.order_id} (partner ${order.partner_id}, ${order.quantity} eSIMs, ${order.status})`;
    const lines = linesOf.get(order.order_id) ?? [];
    if (!checkMoney(found, what, order, lines)) continue;
    for (const line of lines) {
      const made = provisioned.get(line.reference) ?? [];
      const refusals = refused.get(line.reference) ?? [];
      if (line.status === "completed" && (made.length !== 1 || made[0]!.iccid !== line.iccid)) {
        found.add(
          "group-line-delivered-once",
          `${what}: line ${line.position} (${line.iccid}) has ${made.length} provisionings at the carrier ` +
            `(${made.map((p) => p.iccid).join(", ")})`,
        );
      } else if (line.status !== "completed" && made.length > 0) {
        found.add(
          "nothing-delivered-unpaid",
          `${what}: line ${line.position} is ${line.status} but the carrier provisioned ${made[0]!.iccid} for it`,
        );
      }
      if (line.status === "failed" && refusals.length !== 1) {
        found.add(
          "failed-was-refused",
          `${what}: line ${line.position} failed with ${refusals.length} refusals`,
        );
      }
    }
    if (order.status === "completed")
      checkGroupEmails(found, what, order, lines, deliveriesOf.get(order.order_id) ?? []);
  }
}

/** The order's own record: its lines, transfer, eSIMs and purchases. False when nothing more is worth checking. */
function checkMoney(
  found: BreachList,
  what: string,
  order: OrderFacts,
  lines: readonly LineFacts[],
): boolean {
  if (lines.length !== order.quantity) {
    found.add("group-lines", `${what} has ${lines.length} lines`);
    return false;
  }
  if (order.transfers !== 1)
    found.add("one-transfer-per-order", `${what} has ${order.transfers} purchase transfers`);
  if (order.status === "pending") {
    found.add("no-pending-order", `${what} is still pending`);
    return true;
  }
  const made = lines.filter((line) => line.status === "completed").length;
  const pending = lines.filter((line) => line.status === "pending").length;
  if (pending > 0) found.add("group-lines", `${what} is final with ${pending} lines pending`);
  if (order.status === "failed") {
    if (order.voided !== 1 || order.posted !== 0 || made > 0 || order.purchases + order.esims > 0) {
      found.add(
        "failed-is-voided",
        `${what}: ${order.posted} posted, ${order.voided} voided transfers, ${made} lines made, ` +
          `${order.purchases} purchases, ${order.esims} eSIMs`,
      );
    }
    return true;
  }
  if (order.status !== "completed") {
    found.add("group-lines", `${what}: a group order is never ${order.status}`);
    return true;
  }
  const held = order.held_minor ?? order.transfer_amount_minor ?? 0;
  if (
    order.posted !== 1 ||
    order.transfer_amount_minor !== order.total_minor ||
    order.total_minor * order.quantity !== held * made
  ) {
    found.add(
      "group-charged-for-made",
      `${what}: total ${order.total_minor}, ${order.posted} posted transfer of ${order.transfer_amount_minor} ` +
        `(held ${held}) for ${made} of ${order.quantity} eSIMs made`,
    );
  }
  if (made === 0 || order.purchases !== made || order.esims !== made) {
    found.add(
      "group-lines",
      `${what}: ${made} lines made, ${order.purchases} purchases, ${order.esims} eSIMs`,
    );
  }
  return true;
}

/** One email per traveller whose eSIM was made (or one to the order's address without travellers). */
function checkGroupEmails(
  found: BreachList,
  what: string,
  order: OrderFacts,
  lines: readonly LineFacts[],
  deliveries: readonly DeliveryFacts[],
): void {
  const named = lines.some((line) => line.email !== null);
  const expected = named
    ? lines
        .filter((line) => line.status === "completed" && line.email !== null)
        .map((line) => `${line.position} ${line.email}`)
    : [`0 ${order.email}`];
  const got = deliveries.map((delivery) => `${delivery.position} ${delivery.recipient}`);
  const key = (list: string[]) => [...list].sort().join(", ");
  if (key(expected) !== key(got)) {
    found.add("group-emails", `${what}: emails expected to [${key(expected)}], delivered to [${key(got)}]`);
  }
}

/** An order id (src/shared/ids.ts: 16 random bytes, base64url), wherever a Message-ID puts it. */
const ORDER_ID = /ord_[A-Za-z0-9_-]{22}/g;

/**
 * What reached the SMTP server for groups: a message whose Message-ID names a group order (alone,
 * or with a line's position, in whatever form) went to one of its expected recipients, and each of
 * them got one. Returns the messages it took, for checkSmtp to leave alone.
 */
export function checkGroupSmtp(
  found: BreachList,
  groups: readonly OrderFacts[],
  lines: readonly LineFacts[],
  messages: readonly ReceivedMessage[],
): Set<ReceivedMessage> {
  const byId = new Map(groups.map((order) => [order.order_id, order]));
  const linesOf = groupBy([...lines], (line) => line.order_id);
  const taken = new Set<ReceivedMessage>();
  const reached = new Map<string, Set<string>>();
  for (const message of messages) {
    const head = (message.raw.split("\r\n\r\n")[0] ?? "").replace(/\r\n[ \t]+/g, " ");
    const header = /^message-id:[ \t]*(\S+)/im.exec(head)?.[1] ?? "";
    const order = [...header.matchAll(ORDER_ID)].map((m) => byId.get(m[0])).find((o) => o !== undefined);
    if (order === undefined) continue;
    taken.add(message);
    for (const to of message.envelope.rcpt_to) {
      reached.set(order.order_id, (reached.get(order.order_id) ?? new Set()).add(to));
    }
  }
  for (const order of groups) {
    if (order.status !== "completed") {
      if (reached.has(order.order_id))
        found.add(
          "smtp",
          `group order ${order.order_id} is ${order.status} but a confirmation went out for it`,
        );
      continue;
    }
    const own = linesOf.get(order.order_id) ?? [];
    const named = own.some((line) => line.email !== null);
    const expected = named
      ? own.filter((line) => line.status === "completed" && line.email !== null).map((line) => line.email!)
      : [order.email];
    const got = reached.get(order.order_id) ?? new Set<string>();
    const missing = expected.filter((to) => !got.has(to));
    const stray = [...got].filter((to) => !expected.includes(to));
    if (missing.length > 0)
      found.add("smtp", `group order ${order.order_id}: no confirmation reached ${missing.join(", ")}`);
    if (stray.length > 0)
      found.add(
        "smtp",
        `group order ${order.order_id}: a confirmation went to ${stray.join(", ")}, who has no eSIM of it`,
      );
  }
  return taken;
}
