// Discovery with price lists (issue 13): the same GET as discovery, its key going round 10 partners
// that each have a price list of their own (a discount and an override), against the plain
// discovery run of the same run (one key, list prices): ten lists in use must cost no more.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { bearer, request, requestBytes } from "../../test/support/http.ts";
import { type Context, DISCOVERY_PATH, log, PACKAGE_ID, READ_CONNECTIONS } from "../support/context.ts";
import { measureWrk, ratioOf, record, wrkOptions } from "../support/runner.ts";
import type { Partner } from "../support/setup.ts";

export const PRICE_LISTS = 10;

/** The last partners get the lists: the plain discovery run's partner (the first) keeps list prices. */
async function pricedPartners(ctx: Context): Promise<Partner[]> {
  const partners = ctx.partners.slice(-PRICE_LISTS);
  for (const [index, partner] of partners.entries()) {
    const answer = await request(ctx.service.url, "PUT", `/admin/partners/${partner.partner_id}/pricing`, {
      headers: bearer(ctx.admin_token),
      // Each list differs from the others: its own discount and its own price for one package.
      body: {
        discount_percent: index + 1,
        overrides: [{ package_id: PACKAGE_ID, amount_minor: 500 + index }],
      },
    });
    if (answer.status !== 200) {
      throw new Error(
        `discovery-prices: setting a price list answered ${answer.status}: ${JSON.stringify(answer.body)}`,
      );
    }
  }
  return partners;
}

export async function discoveryPrices(ctx: Context, discovery_per_s: number | null): Promise<void> {
  const partners = await pricedPartners(ctx);
  const bodies = new Set<string>();
  for (const partner of partners) {
    const fetched = await requestBytes(ctx.service.url, DISCOVERY_PATH, partner.api_key);
    if (fetched.status !== 200) throw new Error(`discovery-prices: discovery answered ${fetched.status}`);
    bodies.add(fetched.body.toString("utf8"));
  }
  // Ten lists must give ten answers, or the run would measure one list ten times.
  if (bodies.size !== partners.length) {
    throw new Error(`discovery-prices: ${partners.length} price lists gave ${bodies.size} different answers`);
  }
  const keys_file = path.join(ctx.tmp, "price-list-keys.txt");
  await writeFile(keys_file, partners.map((partner) => `${partner.api_key}\n`).join(""));
  const result = await measureWrk(ctx, {
    label: "discovery-prices",
    name: `discovery (service, ${partners.length} price lists)`,
    target: "≥ 1 × discovery",
    concurrency: READ_CONNECTIONS,
    options: wrkOptions(ctx, ctx.service.url, {
      script: "get-keys.lua",
      env: { BENCH_PATH: DISCOVERY_PATH, BENCH_KEYS: keys_file },
    }),
    counted_by_script: false,
  });
  const sizes = [...bodies].map((body) => Buffer.byteLength(body));
  result.notes.push(`${partners.length} keys in turn, ${Math.min(...sizes)}-${Math.max(...sizes)} B bodies`);
  record(ctx, result, {
    name: `discovery: ${partners.length} price lists / one (req/s)`,
    value: ratioOf(result.ok_per_s, discovery_per_s),
    target: 1,
    explain: "each partner's price list from the catalog cache: rotating ten lists costs no more than one",
  });
  if (discovery_per_s === null)
    log("discovery-prices: no plain discovery run in this run (--only), no ratio");
}
