// The chaos client loops: purchases, top-ups, replays and reads.

import type { Json } from "../http.ts";
import { createRng, type Rng } from "../rng.ts";
import { observe, send, sendUntilAnswered, submitUntilFinal } from "./client.ts";
import { CHAOS_END_USER } from "./options.ts";
import { refund } from "./refunds.ts";
import { type Operation, type Run, sleep } from "./state.ts";

export function endUserEmail(rng: Rng, op: number): string {
  const roll = rng.next();
  if (roll < 0.08) return "decline@carrier.test";
  if (roll < 0.14) return "slow@carrier.test";
  return `user${op}@example.com`;
}

/** The share of purchases that are group orders (issue 34): carts of 2-5 eSIMs, one traveller each. */
export const GROUP_SHARE = 0.25;

/** A group's travellers: each its own address, the carrier's magic ones among them (endUserEmail). */
function travellersOf(rng: Rng, op: number, quantity: number): Record<string, string>[] {
  return Array.from({ length: quantity }, (_, i) => {
    const email = endUserEmail(rng, op);
    return {
      first_name: `Traveller${i}`,
      last_name: "Chaos",
      email: email.endsWith("@carrier.test") ? email : `traveller${op}-${i}@example.com`,
    };
  });
}

export async function purchase(run: Run, rng: Rng, op: number): Promise<void> {
  const thin = rng.chance(0.15);
  const partner = rng.pick(run.partners.filter((p) => p.thin === thin));
  // A group's eSIMs are the carrier's: the suppliers' audit (suppliers.ts) knows one reference per order.
  const quantity = rng.chance(GROUP_SHARE) ? rng.int(2, 5) : 1;
  // The supplier first, then one of its packages: each supplier a real share, however many it sells.
  const supplier = quantity > 1 ? "carrier" : rng.pick([...new Set(run.packages.map((p) => p.supplier))]);
  const pkg = rng.pick(run.packages.filter((p) => p.supplier === supplier));
  // A lost 201 makes the client ask again: an unused cart is harmless, a second order is not.
  const cart = await sendUntilAnswered(run, rng, "POST", "/v1/orders/cart", {
    key: partner.api_key,
    body: quantity > 1 ? { package_id: pkg.package_id, quantity } : { package_id: pkg.package_id },
  });
  if (cart.status !== 201) {
    run.breach(`purchase op ${op}: cart answered ${cart.status} ${cart.body.code}`);
    return;
  }
  const client_reference = `chaos-op-${op}`;
  const operation: Operation = {
    op,
    kind: "purchase",
    supplier,
    partner,
    client_reference,
    cart_key: cart.body.cart_key,
    idempotency_key: null,
    body: {
      cart_key: cart.body.cart_key,
      ...CHAOS_END_USER,
      email: endUserEmail(rng, op),
      client_reference,
      ...(quantity > 1 ? { travellers: travellersOf(rng, op, quantity) } : {}),
    },
    quantity,
    final: "unresolved",
    order_ids: new Set(),
    refund: "none",
    iccid: null,
  };
  run.operations.push(operation);
  await submitUntilFinal(run, rng, operation, "/v1/orders/submit", {}, { race: rng.chance(0.15) });
  run.count(run.stats.outcomes, `purchase ${operation.final}`);
  if (quantity > 1) run.count(run.stats.outcomes, `group purchase ${operation.final}`);
  run.count(run.stats.suppliers, `${supplier} purchase ${operation.final}`);
  if (operation.final === "completed") {
    const order_id = [...operation.order_ids][0];
    const order = await sendUntilAnswered(run, rng, "GET", `/v1/orders/${order_id}`, {
      key: partner.api_key,
    });
    const iccids = madeIccids(run, operation, order.body, cart.body.total.amount_minor / quantity);
    if (order.status !== 200 || iccids.length === 0) {
      run.breach(`purchase op ${op}: GET /v1/orders/${order_id} answered ${order.status} without an ICCID`);
    } else {
      operation.iccid = iccids[0]!;
      // Every eSIM of a group may be topped up, and each top-up is the eSIM's alone.
      for (const iccid of iccids) {
        partner.iccids.push(iccid);
        run.iccid_suppliers.set(iccid, supplier);
      }
    }
  }
  if (operation.final !== "unresolved" && rng.chance(0.15))
    await replay(run, rng, operation, "/v1/orders/submit", {});
}

/**
 * The eSIMs a completed order made. Of a group, the client checks what it was told: one entry per
 * eSIM ordered, each completed (with its ICCID) or failed, and a total of the completed ones' price.
 */
function madeIccids(run: Run, operation: Operation, order: Json, price_minor: number): string[] {
  const purchases = (Array.isArray(order.purchases) ? order.purchases : []) as Json[];
  const made = purchases.filter((p) => p.status === "completed" && typeof p.iccid === "string");
  if (operation.quantity > 1) {
    const what = `purchase op ${operation.op} (group of ${operation.quantity})`;
    if (purchases.length !== operation.quantity || order.quantity !== operation.quantity)
      run.breach(`${what}: the order shows quantity ${order.quantity} and ${purchases.length} purchases`);
    if (purchases.some((p) => p.status !== "completed" && p.status !== "failed"))
      run.breach(`${what}: a purchase is neither completed nor failed`);
    if (order.total?.amount_minor !== made.length * price_minor)
      run.breach(
        `${what}: total ${order.total?.amount_minor} for ${made.length} eSIMs made at ${price_minor}`,
      );
  }
  return made.map((p) => p.iccid as string);
}

export async function topUp(run: Run, rng: Rng, op: number): Promise<boolean> {
  const candidates = run.partners.filter((p) => p.iccids.some((i) => !run.refunded_iccids.has(i)));
  if (candidates.length === 0) return false;
  const partner = rng.pick(candidates);
  const iccid = rng.pick(partner.iccids.filter((i) => !run.refunded_iccids.has(i)));
  run.topped_up_iccids.add(iccid);
  const offer = await sendUntilAnswered(run, rng, "GET", `/v1/orders/available-topups/${iccid}`, {
    key: partner.api_key,
  });
  if (offer.status !== 200 || !Array.isArray(offer.body.data)) {
    run.breach(`topup op ${op}: available-topups for ${iccid} answered ${offer.status} ${offer.body.code}`);
    return true;
  }
  if (offer.body.data.length === 0) return false;
  const row = rng.pick(offer.body.data as { package_id: string; external_package_id: string }[]);
  const client_reference = `chaos-op-${op}`;
  const idempotency_key = `chaos-${run.options.seed}-${op}`;
  const operation: Operation = {
    op,
    kind: "topup",
    supplier: run.iccid_suppliers.get(iccid) ?? "carrier",
    partner,
    client_reference,
    cart_key: null,
    idempotency_key,
    body: {
      iccid,
      package_id: row.package_id,
      external_package_id: row.external_package_id,
      ...CHAOS_END_USER,
      email: endUserEmail(rng, op),
      client_reference,
    },
    final: "unresolved",
    order_ids: new Set(),
    quantity: 1,
    refund: "none",
    iccid,
  };
  run.operations.push(operation);
  const headers = { "idempotency-key": idempotency_key };
  await submitUntilFinal(run, rng, operation, "/v1/orders/submit-topup", headers, { race: rng.chance(0.15) });
  run.count(run.stats.outcomes, `topup ${operation.final}`);
  run.count(run.stats.suppliers, `${operation.supplier} topup ${operation.final}`);
  if (operation.final !== "unresolved" && rng.chance(0.2)) {
    await replay(run, rng, operation, "/v1/orders/submit-topup", headers);
  }
  if (rng.chance(0.1)) {
    // The same key with another body is refused, whatever state the first request is in.
    run.stats.key_reuses_checked += 1;
    const reused = await sendUntilAnswered(run, rng, "POST", "/v1/orders/submit-topup", {
      key: partner.api_key,
      body: { ...operation.body, client_reference: `${client_reference}-other` },
      headers,
    });
    // A first request refused before any order (not_available: its eSIM refunded meanwhile) left
    // nothing under the key, which rolled back with it: the other body is a request of its own,
    // refused for the same eSIM the same way. Either way a 422 that charged nothing.
    const refusals =
      operation.final === "not_available"
        ? ["idempotency_key_reused", "topup_not_available"]
        : ["idempotency_key_reused"];
    if (reused.status !== 422 || !refusals.includes(reused.body.code)) {
      run.breach(
        `topup op ${op}: the key reused with another body answered ${reused.status} ${reused.body.code}`,
      );
    }
  }
  return true;
}

/** Asks again after a final answer: the same outcome and the same order, never a second one. */
export async function replay(
  run: Run,
  rng: Rng,
  operation: Operation,
  path: string,
  headers: Record<string, string>,
): Promise<void> {
  run.stats.replays_checked += 1;
  for (let attempt = 0; attempt < 20; attempt++) {
    const sent = await send(run, rng, "POST", path, {
      key: operation.partner.api_key,
      body: operation.body,
      headers,
    });
    if (!sent.answer) continue;
    // The database busy or restarting under the replay says nothing about the outcome: ask again.
    if (sent.answer.status === 503 && sent.answer.body.code === "service_unavailable") {
      await sleep(rng.int(200, 600));
      continue;
    }
    // A top-up's key stores its 402; a cart does not (spec: it may succeed once funds are freed).
    const insufficient = operation.kind === "topup" ? 402 : null;
    const expected = { completed: 200, failed: 502, insufficient, not_available: 422, unresolved: null }[
      operation.final
    ];
    if (expected === null) return;
    if (sent.answer.status !== expected) {
      run.breach(
        `${operation.kind} op ${operation.op}: answered ${expected} first, ${sent.answer.status} ${sent.answer.body.code ?? ""} on replay`,
      );
    }
    observe(run, operation, sent.answer, path);
    return;
  }
}

export async function read(run: Run, rng: Rng): Promise<void> {
  const partner = rng.pick(run.partners);
  const roll = rng.next();
  if (roll < 0.5) {
    const wallet = await sendUntilAnswered(run, rng, "GET", "/v1/profile/wallet", { key: partner.api_key });
    const available = wallet.body.balance?.amount_minor;
    if (wallet.status !== 200 || typeof available !== "number" || available < 0) {
      run.breach(`wallet of ${partner.name} read ${wallet.status} ${JSON.stringify(wallet.body)}`);
    }
  } else {
    const page = await sendUntilAnswered(run, rng, "GET", "/v1/profile/orders?limit=5", {
      key: partner.api_key,
    });
    if (page.status !== 200 || !Array.isArray(page.body.data)) {
      run.breach(`order list of ${partner.name} answered ${page.status}`);
    }
  }
}

export async function clientLoop(run: Run, index: number): Promise<void> {
  const rng = createRng(run.options.seed, `client-${index}`);
  while (run.progress() < 1) {
    const op = run.started_ops++;
    if (op >= run.options.operations) return;
    const roll = rng.next();
    if (roll < 0.2) {
      run.count(run.stats.operations, "read");
      await read(run, rng);
    } else if (roll < 0.45 && run.stats.topups_available && (await topUp(run, rng, op))) {
      run.count(run.stats.operations, "topup");
    } else if (roll < 0.6 && run.stats.refunds_available && (await refund(run, rng, op))) {
      run.count(run.stats.operations, "refund");
    } else {
      run.count(run.stats.operations, "purchase");
      await purchase(run, rng, op);
    }
  }
}
