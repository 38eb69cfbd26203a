// Destinations (issue 34): GET /v1/esim/destinations, the list of destinations with their package
// counts and the partner's cheapest price, served like discovery (per-version cached bodies,
// remembered per partner), measured the same way so the two can be compared.
import { requestBytes } from "../../test/support/http.ts";
import { type Context, READ_CONNECTIONS } from "../support/context.ts";
import { measureWrk, ratioOf, record, wrkOptions } from "../support/runner.ts";

export const DESTINATIONS_PATH = "/v1/esim/destinations";

export async function destinations(ctx: Context, discovery_per_s: number | null): Promise<void> {
  const key = ctx.partners[0]!.api_key;
  const fetched = await requestBytes(ctx.service.url, DESTINATIONS_PATH, key);
  if (fetched.status !== 200) throw new Error(`destinations answered ${fetched.status}`);
  const rows = (JSON.parse(fetched.body.toString("utf8")) as { data: unknown[] }).data.length;
  const result = await measureWrk(ctx, {
    label: "destinations",
    name: "destinations (service)",
    target: "≥ 0.7 × discovery",
    concurrency: READ_CONNECTIONS,
    options: wrkOptions(ctx, ctx.service.url, { env: { BENCH_PATH: DESTINATIONS_PATH, BENCH_API_KEY: key } }),
    counted_by_script: false,
  });
  result.notes.push(`${fetched.body.length} B body, ${rows} destinations`);
  record(ctx, result, {
    name: "destinations: req/s / discovery req/s",
    value: ratioOf(result.ok_per_s, discovery_per_s),
    target: 0.7,
    explain:
      "the same class of answer as discovery: a remembered body per partner, no database round trip on a hit; " +
      "the bodies differ in size, so the ratio also carries the bytes",
  });
}
