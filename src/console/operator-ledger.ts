// The ledger audit (the CLI's `ledger audit`, the same use case): every invariant checked from
// the transfers, breaches listed. Run on demand: it reads the whole ledger.
import { auditLedger } from "../wallet/audit-ledger.ts";
import { html } from "./html.ts";
import { notice, page } from "./layout.ts";
import type { ConsolePages } from "./pages.ts";
import { operatorShell } from "./shells.ts";

const MAX_BREACHES_SHOWN = 100;

export const operatorLedgerPages: ConsolePages = (scope, ctx) => {
  scope.get("/ledger", async (request, reply) => {
    const result = await auditLedger(ctx.db);
    const summary = `${result.accounts} accounts, ${result.transfers} transfers`;
    const body =
      result.breaches.length === 0
        ? notice("ok", `Ledger OK: ${summary}; every invariant holds.`)
        : html`${notice("error", `Ledger audit FAILED: ${result.breaches.length} breach(es) over ${summary}.`)}
          <div class="panel"><ul>${result.breaches.slice(0, MAX_BREACHES_SHOWN).map((b) => html`<li>${b}</li>`)}</ul></div>`;
    return reply.type("text/html; charset=utf-8").send(
      page(
        "Ledger audit",
        operatorShell(request, ctx, "/console/admin/ledger"),
        html`${body}
        <p class="hint">Checked now, from the transfers: the operator's accounts against the credits and the completed
        orders, every wallet's running totals, no wallet below zero, every transfer in its account's currency, and each
        purchase's transfer in the state its order says.</p>`,
      ),
    );
  });
};
