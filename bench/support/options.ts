// The command line of `npm run bench`.
import path from "node:path";
import { parseArgs } from "node:util";
import { type Options, SCENARIOS, type ScenarioName } from "./context.ts";

export function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: "string", default: "15" },
      warmup: { type: "string", default: "3" },
      only: { type: "string" },
      profile: { type: "boolean", default: false },
      "service-dir": { type: "string" },
      // On by default (issue 12's figure); `--no-webhooks` runs without the receiver, to compare.
      webhooks: { type: "boolean", default: true },
      // Confirmation emails through bench/mail-relay.ts over SMTP, as production sends them (SMTP_URL
      // is required there); `--no-mail-relay` leaves the sandbox default, .eml files under DATA_DIR.
      "mail-relay": { type: "boolean", default: true },
      // `--pgbouncer 20`: the service's requests through Debian's PgBouncer in transaction mode with
      // 20 server connections (issue 37: the figures through PgBouncer beside the direct ones).
      pgbouncer: { type: "string", default: "0" },
    },
    allowNegative: true,
  });
  const only = values.only ? values.only.split(",").map((name) => name.trim()) : [...SCENARIOS];
  for (const name of only) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      throw new Error(`--only: unknown scenario ${name}; known: ${SCENARIOS.join(", ")}`);
    }
  }
  return {
    duration_s: Number(values.duration),
    warmup_s: Number(values.warmup),
    only: new Set(only as ScenarioName[]),
    profile: values.profile,
    webhooks: values.webhooks,
    mail_relay: values["mail-relay"],
    service_dir: path.resolve(values["service-dir"] ?? process.cwd()),
    pgbouncer_pool: poolSize(values.pgbouncer),
  };
}

function poolSize(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 200)
    throw new Error(`--pgbouncer: server connections, 0 (none) to 200, got ${raw}`);
  return value;
}
