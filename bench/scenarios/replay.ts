// Replay: completed carts submitted again and again, against the discovery rate.
import path from "node:path";
import { cartFile, quiesce } from "../support/carts.ts";
import {
  type Context,
  log,
  MAX_REPLAY_CARTS,
  PARTNERS,
  PURCHASE_CONCURRENCY,
  READ_CONNECTIONS,
} from "../support/context.ts";
import { measureWrk, ratioOf, record, wrkOptions } from "../support/runner.ts";
import { type CartLine, submitCarts, writeCartFile } from "../support/setup.ts";

export async function completedCartLines(ctx: Context, limit: number): Promise<CartLine[]> {
  const keys = new Map(ctx.partners.map((partner) => [partner.partner_id, partner.api_key]));
  const result = await ctx.pool.query<{ partner_id: string; cart_key: string }>(
    `select partner_id, cart_key from orders
     where type = 'esim' and status = 'completed' and partner_id = any($1::text[])
     order by seq limit $2`,
    [[...keys.keys()], limit],
  );
  return result.rows.map((row) => ({ api_key: keys.get(row.partner_id)!, cart_key: row.cart_key }));
}

export async function replay(ctx: Context, discovery_per_s: number | null): Promise<void> {
  let lines = await completedCartLines(ctx, MAX_REPLAY_CARTS);
  if (lines.length < PARTNERS) {
    // Run alone (--only replay): complete some orders first, outside any measurement.
    const { carts } = await cartFile(ctx, "replay-prime", 3 * PARTNERS);
    log(
      `replay: ${await submitCarts(ctx.service.url, carts, PURCHASE_CONCURRENCY)} orders completed to replay`,
    );
    lines = await completedCartLines(ctx, MAX_REPLAY_CARTS);
    // Their confirmation emails are not the replay's work.
    await quiesce(ctx);
  }
  // Interleave partners again (the query returns them in completion order).
  const file = path.join(ctx.tmp, "replay.carts");
  await writeCartFile(file, lines);
  const result = await measureWrk(ctx, {
    label: "replay",
    name: "replay (service)",
    target: "≥ 0.7 × discovery",
    concurrency: READ_CONNECTIONS,
    options: wrkOptions(ctx, ctx.service.url, {
      script: "submit.lua",
      env: { BENCH_CARTS: file, BENCH_LOOP: "1" },
    }),
    counted_by_script: false,
  });
  result.notes.push(`${lines.length} completed carts, round and round`);
  record(ctx, result, {
    name: "replay: replays/s / discovery req/s",
    value: ratioOf(result.ok_per_s, discovery_per_s),
    target: 0.7,
    explain: "a retried submit answers from the stored order: it should cost about what a cached read costs",
  });
}
