// `ledger audit`: the ledger's invariants, checked from the transfers (src/wallet/audit-ledger.ts).
// A breach is a finding, not a crash: the report is printed and the exit status is 1, so a cron
// job or a deploy step can page on it.
import { auditLedger } from "../wallet/audit-ledger.ts";
import type { CliContext, Command, CommandOutput } from "./command.ts";

/** Breaches printed for people; --json carries every one auditLedger returned. */
const MAX_BREACHES_SHOWN = 100;

async function audit(ctx: CliContext): Promise<CommandOutput> {
  const result = await auditLedger(ctx.db);
  const ok = result.breaches.length === 0;
  const summary = `${result.accounts} accounts, ${result.transfers} transfers`;
  if (ok) return { json: { ok, ...result }, text: `Ledger OK: ${summary}, every invariant holds.` };
  const shown = result.breaches.slice(0, MAX_BREACHES_SHOWN).map((breach) => `  - ${breach}`);
  const more = result.breaches.length - shown.length;
  const text = [
    `Ledger audit FAILED: ${result.breaches.length} breach(es) over ${summary}:`,
    ...shown,
    ...(more > 0 ? [`  … and ${more} more (use --json for all)`] : []),
  ].join("\n");
  return { json: { ok, ...result }, text, exit_code: 1 };
}

export const ledgerCommands: readonly Command[] = [
  {
    group: "ledger",
    name: "audit",
    args: [],
    summary: "Check the double-entry ledger's invariants; exit 1 listing any breach",
    example: "npm run cli -- ledger audit",
    prepare: () => audit,
  },
];
