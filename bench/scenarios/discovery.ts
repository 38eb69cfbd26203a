// Discovery: the cached package list, against a bare Fastify route sending the same bytes.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { requestBytes } from "../../test/support/http.ts";
import { type Context, DISCOVERY_PATH, READ_CONNECTIONS } from "../support/context.ts";
import { startBareServer } from "../support/processes.ts";
import { measureWrk, record, wrkOptions } from "../support/runner.ts";

export async function discovery(ctx: Context): Promise<{ service: number; bare: number }> {
  const key = ctx.partners[0]!.api_key;
  const fetched = await requestBytes(ctx.service.url, DISCOVERY_PATH, key);
  if (fetched.status !== 200) throw new Error(`discovery answered ${fetched.status}`);
  const body_file = path.join(ctx.tmp, "discovery-body.json");
  await writeFile(body_file, fetched.body);
  const env = { BENCH_PATH: DISCOVERY_PATH, BENCH_API_KEY: key };

  const served = await measureWrk(ctx, {
    label: "discovery",
    name: "discovery (service)",
    target: "",
    concurrency: READ_CONNECTIONS,
    options: wrkOptions(ctx, ctx.service.url, { env }),
    counted_by_script: false,
  });
  served.notes.push(`${fetched.body.length} B body`);
  record(ctx, served);

  ctx.bare = await startBareServer({ body_file, log_dir: ctx.tmp, node_flags: [] });
  try {
    const check = await requestBytes(ctx.bare.url, DISCOVERY_PATH, key);
    if (!check.body.equals(fetched.body)) throw new Error("the bare server does not send the same bytes");
    const limit = await measureWrk(ctx, {
      label: "discovery-bare",
      name: "discovery (bare Fastify)",
      target: "",
      concurrency: READ_CONNECTIONS,
      options: wrkOptions(ctx, ctx.bare.url, { env }),
      counted_by_script: false,
    });
    served.target = "≥ 0.75 × bare";
    record(ctx, limit, {
      name: "discovery: service / bare Fastify",
      value: served.ok_per_s / limit.ok_per_s,
      target: 0.75,
      explain: "the same bytes from a bare route: what auth, the cache lookup, hooks and headers cost",
    });
    return { service: served.ok_per_s, bare: limit.ok_per_s };
  } finally {
    await ctx.bare.stop();
    ctx.bare = null;
  }
}
