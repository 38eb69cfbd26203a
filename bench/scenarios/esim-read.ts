// eSIM read: GET /v1/esims/{iccid} with a valid key, against the discovery rate. Like discovery it
// answers from a per-process cache (src/esims/esim-cache.ts): a miss is one indexed query (the eSIM,
// its order and its bundles) and a render; the cache is dropped by an esim_changed NOTIFY or a 3 s TTL.
import { requestBytes } from "../../test/support/http.ts";
import { type Context, log, PACKAGE_ID, PURCHASE_CONCURRENCY, READ_CONNECTIONS } from "../support/context.ts";
import { measureWrk, ratioOf, record, wrkOptions } from "../support/runner.ts";
import { createCarts, submitCarts } from "../support/setup.ts";

/** One eSIM of the first partner, bought outside any measurement if it has none yet. */
async function esimToRead(ctx: Context): Promise<{ api_key: string; iccid: string }> {
  const partner = ctx.partners[0]!;
  const find = async () =>
    (
      await ctx.pool.query<{ iccid: string }>(
        "select iccid from esims where partner_id = $1 order by seq limit 1",
        [partner.partner_id],
      )
    ).rows[0];
  let row = await find();
  if (!row) {
    const carts = await createCarts(ctx.service.url, [partner], 1, PACKAGE_ID);
    log(`esim-read: ${await submitCarts(ctx.service.url, carts, PURCHASE_CONCURRENCY)} eSIM bought to read`);
    row = await find();
  }
  if (!row) throw new Error("esim-read: no eSIM to read");
  return { api_key: partner.api_key, iccid: row.iccid };
}

export async function esimRead(ctx: Context, discovery_per_s: number | null): Promise<void> {
  const { api_key, iccid } = await esimToRead(ctx);
  const esim_path = `/v1/esims/${iccid}`;
  const fetched = await requestBytes(ctx.service.url, esim_path, api_key);
  if (fetched.status !== 200) throw new Error(`esim-read: GET ${esim_path} answered ${fetched.status}`);
  const result = await measureWrk(ctx, {
    label: "esim-read",
    name: "esim read (service)",
    target: "≥ 0.5 × discovery",
    concurrency: READ_CONNECTIONS,
    options: wrkOptions(ctx, ctx.service.url, { env: { BENCH_PATH: esim_path, BENCH_API_KEY: api_key } }),
    counted_by_script: false,
  });
  const bundles = (JSON.parse(fetched.body.toString("utf8")) as { bundles: unknown[] }).bundles.length;
  result.notes.push(`${fetched.body.length} B body, ${bundles} bundle(s)`);
  record(ctx, result, {
    name: "esim-read: req/s / discovery req/s",
    value: ratioOf(result.ok_per_s, discovery_per_s),
    target: 0.5,
    explain: "the rendered eSIM from the per-process cache; a miss (every 3 s at most) is one indexed query",
  });
}
