// `profiles import|inventory|notifications`: the ES2+ profile inventory (operator data: ICCID
// ranges per profile type and package, CARRIER_PROFILES=es2plus) and what the SM-DP+ reported of
// one ICCID, for support.

import { importInventory, inventoryCounts } from "../carrier/es2plus/import-inventory.ts";
import { smdpNotificationsOf } from "../esims/smdp-notification-report.ts";
import { MAX_RANGE_COUNT } from "../lib/iccid-range.ts";
import { isValidIccid } from "../lib/luhn.ts";
import { limit } from "./args.ts";
import { CliError, type Command } from "./command.ts";
import { table, timestamp } from "./output.ts";

const MAX_LIST_LIMIT = 1_000;

function text(value: string | undefined, name: string, max: number): string {
  const given = (value ?? "").trim();
  if (given === "" || given.length > max)
    throw new CliError("invalid_argument", `${name}: 1 to ${max} characters`);
  return given;
}

export const profileCommands: readonly Command[] = [
  {
    group: "profiles",
    name: "import",
    args: ["<external_package_id>", "<profile_type>", "<first_iccid>", "<count>"],
    summary: "Add an ICCID range of the SM-DP+ (one profile type) to a package's ES2+ inventory",
    example: "npm run cli -- profiles import EU-5GB-30D EU_5GB 8944500000000000008 10000",
    prepare: ({ positionals }) => {
      const external_package_id = text(positionals[0], "external_package_id", 200);
      const profile_type = text(positionals[1], "profile_type", 64);
      const first_iccid = positionals[2] ?? "";
      if (!isValidIccid(first_iccid)) {
        throw new CliError(
          "invalid_argument",
          `"${first_iccid.slice(0, 40)}" is not an ICCID (Luhn digit included)`,
        );
      }
      const count = /^\d{1,6}$/.test(positionals[3] ?? "") ? Number(positionals[3]) : 0;
      if (count < 1 || count > MAX_RANGE_COUNT) {
        throw new CliError("invalid_argument", `count must be a whole number from 1 to ${MAX_RANGE_COUNT}`);
      }
      return async (ctx) => {
        const result = await importInventory(ctx.pool, {
          external_package_id,
          profile_type,
          first_iccid,
          count,
        });
        return {
          json: { external_package_id, profile_type, ...result },
          text: `${result.added} ICCIDs added to ${external_package_id} (${profile_type}); ${result.already_there} were already there.`,
        };
      };
    },
  },
  {
    group: "profiles",
    name: "inventory",
    args: [],
    summary: "ES2+ inventory per package and profile type: total and free ICCIDs, LOW below the threshold",
    example: "npm run cli -- profiles inventory",
    prepare: () => async (ctx) => {
      const threshold = ctx.config.profile_inventory_low_threshold;
      const data = (await inventoryCounts(ctx.pool, MAX_LIST_LIMIT)).map((r) => ({
        ...r,
        low: r.free < threshold,
      }));
      const rows = data.map((r) => [
        r.external_package_id,
        r.profile_type,
        String(r.total),
        String(r.free),
        r.low ? "LOW" : "",
      ]);
      return {
        json: { low_threshold: threshold, data },
        text:
          data.length === 0
            ? "No ES2+ inventory imported."
            : table(
                [
                  { header: "PACKAGE" },
                  { header: "PROFILE_TYPE" },
                  { header: "TOTAL", align: "right" },
                  { header: "FREE", align: "right" },
                  { header: "FLAG" },
                ],
                rows,
              ),
      };
    },
  },
  {
    group: "profiles",
    name: "notifications",
    args: ["<iccid>"],
    options_usage: "[--limit N]",
    options: ["limit"],
    summary: "What the SM-DP+ reported of one ICCID (HandleDownloadProgressInfo), newest first",
    example: "npm run cli -- profiles notifications 8944500000000000008",
    prepare: ({ positionals, options }) => {
      const iccid = positionals[0] ?? "";
      if (!isValidIccid(iccid))
        throw new CliError("invalid_argument", `"${iccid.slice(0, 40)}" is not an ICCID`);
      const max = limit(options.limit, 100, MAX_LIST_LIMIT);
      return async (ctx) => {
        const data = (await smdpNotificationsOf(ctx.db, iccid, max)).map((row) => ({
          ...row,
          occurred_at: timestamp(row.occurred_at),
        }));
        const rows = data.map((r) => [
          String(r.notification_point_id),
          r.status,
          r.subject_code ? `${r.subject_code}/${r.reason_code}` : "",
          r.occurred_at ?? "",
          (r.message ?? "").slice(0, 60),
        ]);
        return {
          json: { data },
          text:
            data.length === 0
              ? `The SM-DP+ reported nothing of ${iccid}.`
              : table(
                  [
                    { header: "POINT" },
                    { header: "STATUS" },
                    { header: "CODE" },
                    { header: "AT" },
                    { header: "MESSAGE" },
                  ],
                  rows,
                ),
        };
      };
    },
  },
];
