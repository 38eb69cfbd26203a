// `esims show|unreachable`: one eSIM as the operator sees it (its partner's view plus the sync's
// state), and the eSIMs the pull sync cannot reach (failed pulls, with how long they have gone
// unreached), so an operator can chase the carrier about them.

import { esimReport, listUnreachableEsims } from "../esims/sync-report.ts";
import { isValidIccid } from "../lib/luhn.ts";
import { limit } from "./args.ts";
import { type CliContext, CliError, type Command, type CommandOutput } from "./command.ts";
import { fields, table, timestamp } from "./output.ts";

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1_000;

function age(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  if (hours >= 48) return `${Math.floor(hours / 24)}d`;
  return hours >= 1
    ? `${hours}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, "0")}m`
    : `${Math.floor(seconds / 60)}m`;
}

async function show(ctx: CliContext, iccid: string): Promise<CommandOutput> {
  const report = await esimReport(ctx.db, iccid);
  if (!report) throw new CliError("esim_not_found", `no eSIM ${iccid}`);
  const { esim, sync } = report;
  const json = {
    partner_id: report.partner_id,
    esim,
    sync: {
      last_synced_at: timestamp(sync.last_synced_at),
      next_sync_at: timestamp(sync.next_sync_at),
      sync_failures: sync.sync_failures,
      last_sync_error: sync.last_sync_error,
    },
  };
  const text = [
    fields([
      ["iccid", esim.iccid],
      ["partner_id", report.partner_id],
      ["order_id", esim.order_id],
      ["status", esim.status],
      ["installed_at", esim.installed_at],
      ["activated_at", esim.activated_at],
      ["expires_at", esim.expires_at],
      ["data_used_mb", esim.usage.data_used_mb],
      ["data_total_mb", esim.usage.data_total_mb ?? "unlimited"],
      ["usage_updated_at", esim.usage.updated_at],
      ["last_synced_at", json.sync.last_synced_at],
      ["next_sync_at", json.sync.next_sync_at],
      ["sync_failures", sync.sync_failures],
      ["last_sync_error", sync.last_sync_error],
    ]),
    "",
    table(
      [
        { header: "BUNDLE (ORDER_ID)" },
        { header: "STATUS" },
        { header: "USED_MB", align: "right" },
        { header: "DATA_MB", align: "right" },
        { header: "EXPIRES_AT" },
      ],
      esim.bundles.map((b) => [
        b.order_id,
        b.status,
        String(b.data_used_mb),
        b.data_mb === null ? "unlimited" : String(b.data_mb),
        b.expires_at ?? "",
      ]),
    ),
  ].join("\n");
  return { json, text };
}

async function unreachable(ctx: CliContext, max: number): Promise<CommandOutput> {
  const rows = await listUnreachableEsims(ctx.db, max);
  const data = rows.map((row) => ({
    iccid: row.iccid,
    partner_id: row.partner_id,
    status: row.status,
    sync_failures: row.sync_failures,
    last_sync_error: row.last_sync_error,
    last_synced_at: timestamp(row.last_synced_at),
    next_sync_at: timestamp(row.next_sync_at),
    unreached_for_seconds: Math.floor(row.unreached_for_s),
  }));
  const text =
    data.length === 0
      ? "Every eSIM the sync tried answered."
      : table(
          [
            { header: "ICCID" },
            { header: "PARTNER_ID" },
            { header: "STATUS" },
            { header: "FAILURES", align: "right" },
            { header: "UNREACHED", align: "right" },
            { header: "LAST ERROR" },
          ],
          data.map((e) => [
            e.iccid,
            e.partner_id,
            e.status,
            String(e.sync_failures),
            age(e.unreached_for_seconds),
            (e.last_sync_error ?? "").slice(0, 80),
          ]),
        );
  return { json: { data }, text };
}

export const esimCommands: readonly Command[] = [
  {
    group: "esims",
    name: "show",
    args: ["<iccid>"],
    summary: "One eSIM: status, usage, bundles, and the carrier sync's state",
    example: "npm run cli -- esims show 8901260000000000014",
    prepare: ({ positionals }) => {
      const iccid = positionals[0] ?? "";
      if (!isValidIccid(iccid))
        throw new CliError("invalid_argument", `"${iccid.slice(0, 40)}" is not an ICCID`);
      return (ctx) => show(ctx, iccid);
    },
  },
  {
    group: "esims",
    name: "unreachable",
    args: [],
    options_usage: "[--limit N]",
    options: ["limit"],
    summary: "eSIMs the carrier sync could not reach (failures, last error), longest unreached first",
    example: "npm run cli -- esims unreachable",
    prepare: ({ options }) => {
      const max = limit(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      return (ctx) => unreachable(ctx, max);
    },
  },
];
