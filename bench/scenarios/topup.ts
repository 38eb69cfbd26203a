// Top-up: one eSIM per partner topped up under Idempotency-Keys, against the pgbench rate.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { request, requestBytes } from "../../test/support/http.ts";
import { type Context, log, PACKAGE_ID, PURCHASE_CONCURRENCY } from "../support/context.ts";
import { measureWrk, ratioOf, record, wrkOptions } from "../support/runner.ts";
import { createCarts, submitCarts } from "../support/setup.ts";
import { againstReference, FULL_TOPUP_SQL_RESULT } from "./purchase-sql.ts";

export type TopUpTarget = { api_key: string; iccid: string; package_id: string; external_package_id: string };

export async function topUpAvailable(ctx: Context): Promise<boolean> {
  const probe = await request(ctx.service.url, "POST", "/v1/orders/submit-topup", {
    key: ctx.partners[0]!.api_key,
    body: {},
  });
  // An unknown route is 404 not_found; a known one refuses the empty body with 400 (or 422).
  return probe.status !== 404;
}

export async function topUpTargets(ctx: Context): Promise<TopUpTarget[]> {
  const esims = async () =>
    (
      await ctx.pool.query<{ partner_id: string; iccid: string }>(
        `select distinct on (partner_id) partner_id, iccid from esims
         where partner_id = any($1::text[]) order by partner_id, created_at`,
        [ctx.partners.map((partner) => partner.partner_id)],
      )
    ).rows;
  let rows = await esims();
  if (rows.length < ctx.partners.length) {
    // One eSIM per partner, bought outside any measurement.
    const have = new Set(rows.map((row) => row.partner_id));
    const lacking = ctx.partners.filter((partner) => !have.has(partner.partner_id));
    const carts = await createCarts(ctx.service.url, lacking, lacking.length, PACKAGE_ID);
    await submitCarts(ctx.service.url, carts, PURCHASE_CONCURRENCY);
    rows = await esims();
  }
  const keys = new Map(ctx.partners.map((partner) => [partner.partner_id, partner.api_key]));
  // The offer is the same for every eSIM of the same package: ask the service once.
  const first = rows[0]!;
  const offer = await requestBytes(
    ctx.service.url,
    `/v1/orders/available-topups/${first.iccid}`,
    keys.get(first.partner_id)!,
  );
  let package_id = PACKAGE_ID;
  let external_package_id = "CARRIER-FR-1GB-7D";
  if (offer.status === 200) {
    const body = JSON.parse(offer.body.toString("utf8"));
    const rows_offered: any[] = Array.isArray(body) ? body : (body.data ?? []);
    const row = rows_offered.find((candidate) => candidate.package_id === PACKAGE_ID) ?? rows_offered[0];
    if (row) {
      package_id = row.package_id;
      external_package_id = row.external_package_id;
    }
  }
  return rows.map((row) => ({
    api_key: keys.get(row.partner_id)!,
    iccid: row.iccid,
    package_id,
    external_package_id,
  }));
}

export async function topUp(ctx: Context, pgbench_tps: number | null): Promise<void> {
  if (!(await topUpAvailable(ctx))) {
    ctx.notes.push("top-up: POST /v1/orders/submit-topup is not served yet; scenario skipped");
    log("top-up: route not served yet; skipped");
    return;
  }
  const targets = await topUpTargets(ctx);
  const file = path.join(ctx.tmp, "topups.txt");
  await writeFile(
    file,
    targets.map((t) => `${t.api_key} ${t.iccid} ${t.package_id} ${t.external_package_id}\n`).join(""),
  );
  const options = wrkOptions(ctx, ctx.service.url, {
    script: "topup.lua",
    connections: PURCHASE_CONCURRENCY,
    env: { BENCH_TOPUPS: file, BENCH_RUN_ID: `bench-${process.pid}-${Date.now()}` },
  });
  const result = await measureWrk(ctx, {
    label: "topup",
    name: "top-up (service)",
    target: "≥ 0.5 × pgbench",
    concurrency: PURCHASE_CONCURRENCY,
    options,
    warmup: { ...options, env: { ...options.env, BENCH_RUN_ID: `warm-${process.pid}-${Date.now()}` } },
    counted_by_script: true,
  });
  // A reference, no target, as the purchase's: the bare cost of all a top-up records.
  const reference = againstReference(ctx, result, FULL_TOPUP_SQL_RESULT, "a top-up");
  if (reference !== null) result.notes.push(reference);
  record(ctx, result, {
    name: "top-up: top-ups/s / pgbench purchase SQL tx/s",
    value: ratioOf(result.ok_per_s, pgbench_tps),
    target: 0.5,
    explain: "a top-up is a purchase with an Idempotency-Key row instead of a cart",
  });
}
