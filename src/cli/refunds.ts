// `refunds held|settle`: refunds the carrier's answer left held (ES2+ CancelOrder's 8.2.1/3.5 after
// our earlier CancelOrder's answer was lost: "cancelled" and "downloaded" look the same), and the
// operator's way to settle one after asking the SM-DP+'s operator what became of the profile.
// A held refund credits nothing until then; a download notification refuses it on its own.
import type { CancelVerdict } from "../carrier/carrier.ts";
import { heldCancels } from "../carrier/es2plus/settle-cancel.ts";
import { HeldRefundNotSettled, settleHeldRefund } from "../refunds/settle-held-refund.ts";
import { ORDER_ID } from "../shared/ids.ts";
import { limit } from "./args.ts";
import { withCarrier, withCarrierContext } from "./carrier.ts";
import { type CliContext, CliError, type Command, type CommandArgs, type CommandOutput } from "./command.ts";
import { fields, table, timestamp } from "./output.ts";

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;

async function held(ctx: CliContext, max: number): Promise<CommandOutput> {
  const rows = await heldCancels(ctx.pool, max);
  const data = rows.map((row) => ({
    order_id: row.reference,
    iccid: row.iccid,
    profile_type: row.profile_type,
    held_since: timestamp(row.since),
  }));
  const text =
    data.length === 0
      ? "No refund is held."
      : [
          table(
            [
              { header: "ORDER_ID" },
              { header: "ICCID" },
              { header: "PROFILE_TYPE" },
              { header: "HELD_SINCE" },
            ],
            data.map((r) => [r.order_id, r.iccid, r.profile_type, r.held_since ?? ""]),
          ),
          "",
          "Ask the SM-DP+'s operator what became of each ICCID, then: npm run cli -- refunds settle <order_id>",
          "--cancelled (credits the refund once) or --installed (refuses it: esim_installed).",
        ].join("\n");
  return { json: { data }, text };
}

type Settle = { order_id: string; verdict: CancelVerdict };

function checkSettle({ positionals, options }: CommandArgs): Settle {
  const order_id = positionals[0] ?? "";
  if (!ORDER_ID.test(order_id))
    throw new CliError("invalid_argument", `"${order_id.slice(0, 40)}" is not an order id (ord_...)`);
  if ((options.cancelled === undefined) === (options.installed === undefined)) {
    throw new CliError(
      "invalid_argument",
      "say what the SM-DP+ reports: exactly one of --cancelled or --installed",
    );
  }
  return { order_id, verdict: options.cancelled !== undefined ? "cancelled" : "installed" };
}

async function settle(ctx: CliContext, { order_id, verdict }: Settle): Promise<CommandOutput> {
  try {
    const driven = await withCarrier(ctx.config, ctx.pool, (carrier) =>
      settleHeldRefund(withCarrierContext(ctx, carrier), order_id, verdict),
    );
    const answer = driven === null || driven === "topup_pending" ? null : driven;
    const body = answer === null ? null : (JSON.parse(answer.body) as { status?: string; reason?: string });
    const outcome = answer === null ? "pending" : answer.status === 200 ? "refunded" : "refused";
    const json = { order_id, verdict, outcome, reason: body?.reason ?? null };
    const text = fields([
      ["order_id", order_id],
      ["verdict", verdict],
      ["outcome", outcome === "pending" ? "recorded; the refund finishes on its next attempt" : outcome],
      ["reason", json.reason],
    ]);
    return { json, text };
  } catch (error) {
    if (error instanceof HeldRefundNotSettled)
      throw new CliError(error.code, `not settled: ${error.message}`);
    throw error;
  }
}

export const refundCommands: readonly Command[] = [
  {
    group: "refunds",
    name: "held",
    args: [],
    options_usage: "[--limit N]",
    options: ["limit"],
    summary: "Refunds held because the SM-DP+'s answer to CancelOrder was ambiguous (nothing credited yet)",
    example: "npm run cli -- refunds held",
    prepare: ({ options }) => {
      const max = limit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      return (ctx) => held(ctx, max);
    },
  },
  {
    group: "refunds",
    name: "settle",
    args: ["<order_id>"],
    options_usage: "--cancelled|--installed",
    options: ["cancelled", "installed"],
    summary:
      "Settle a held refund as the SM-DP+ reports the profile: --cancelled credits it, --installed refuses it",
    example: "npm run cli -- refunds settle ord_… --cancelled",
    prepare: (args) => {
      const checked = checkSettle(args);
      return (ctx) => settle(ctx, checked);
    },
  },
];
