// The wallet statement (the API's listTransactions): a date range, pages, and the same range as a
// CSV download (the API's exportTransactions: same columns, same formula-safe fields, same cap);
// and a month of it for a finance team (the API's monthly statement): totals, PDF and CSV.
import { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import type { AppContext } from "../shared/context.ts";
import { DATE } from "../shared/day-range.ts";
import { readsQuery } from "../shared/query-names.ts";
import { exportSlot, exportTransactions } from "../wallet/export-transactions.ts";
import { sendMonthlyPdf } from "../wallet/get-monthly-statement.route.ts";
import { renderWallet } from "../wallet/get-wallet.route.ts";
import { getWalletBalance } from "../wallet/get-wallet-balance.ts";
import { listTransactions, type Transaction } from "../wallet/list-transactions.ts";
import { monthlyStatement } from "../wallet/monthly-statement.ts";
import { formatInstant, formatMoney } from "./format.ts";
import { type Html, html } from "./html.ts";
import { page, scrollTable } from "./layout.ts";
import { monthDays, monthlyTotals, monthOf, monthPicker } from "./monthly-statement-panel.ts";
import type { ConsolePages } from "./pages.ts";
import { partnerOf, queryValue } from "./request.ts";
import { allows, partnerShell } from "./shells.ts";

const PAGE_SIZE = 50;

function range(request: FastifyRequest): { from: string | null; to: string | null } {
  const date = (name: string) => {
    const value = queryValue(request, name);
    return value !== null && DATE.test(value) ? value : null;
  };
  return { from: date("from"), to: date("to") };
}

function rangeQuery(r: { from: string | null; to: string | null }): string {
  return new URLSearchParams({
    ...(r.from ? { from: r.from } : {}),
    ...(r.to ? { to: r.to } : {}),
  }).toString();
}

function transactionsTable(rows: readonly Transaction[]): Html {
  if (rows.length === 0) return html`<div class="panel"><p>No transactions in this range.</p></div>`;
  return scrollTable(
    "Transactions",
    html`<table><thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col" class="num">Amount</th>
      <th scope="col" class="num">Balance after</th><th scope="col">Order or reference</th></tr></thead>
      <tbody>${rows.map(
        (t) => html`<tr><td>${formatInstant(t.created_at)}</td><td>${t.type}</td>
          <td class="num">${formatMoney(t.amount)}</td><td class="num">${formatMoney(t.balance_after)}</td>
          <td>${t.order_id ? html`<a class="mono" href="/console/orders/${t.order_id}">${t.order_id}</a>` : (t.reference ?? "—")}${
            t.description ? html`<br><span class="hint">${t.description}</span>` : ""
          }</td></tr>`,
      )}</tbody></table>`,
  );
}

async function walletPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const partner_id = partnerOf(request);
  const r = range(request);
  const cursor = queryValue(request, "cursor");
  const [wallet, statement] = await Promise.all([
    getWalletBalance(ctx.db, partner_id).then(renderWallet),
    listTransactions(ctx.db, { partner_id, ...r, limit: PAGE_SIZE, cursor }),
  ]);
  const query = rangeQuery(r);
  const next = statement.next_cursor
    ? `${query}${query ? "&" : ""}cursor=${encodeURIComponent(statement.next_cursor)}`
    : null;
  const body = html`<section class="cards" aria-label="Balance">
      <div class="card"><p class="label">Balance</p><p class="value">${formatMoney(wallet.balance)}</p></div>
      <div class="card"><p class="label">Held</p><p class="value">${formatMoney(wallet.pending)}</p></div>
    </section>
    <form method="get" action="/console/wallet" class="panel"><div class="fields">
      <div><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${r.from ?? ""}"></div>
      <div><label for="to">To (UTC day, included)</label><input id="to" name="to" type="date" value="${r.to ?? ""}"></div>
      <div class="submit"><button type="submit">Show</button></div>
    </div>
    <div class="actions"><button type="submit" formaction="/console/wallet/statement.csv" class="quiet-accent">Download CSV</button></div>
    </form>
    ${
      allows(request, "statements.read")
        ? html`<h2>Monthly statement</h2>
          <p class="hint">A month's opening and closing balance and its totals, with the month as a PDF or CSV.</p>
          ${monthPicker("/console/wallet/monthly", new Date().toISOString().slice(0, 7))}`
        : ""
    }
    <h2>Statement</h2>
    <p class="hint">Settled money only: a purchase appears once the carrier confirms it.</p>
    ${transactionsTable(statement.data)}
    <div class="pager">${cursor ? html`<a href="/console/wallet${query ? `?${query}` : ""}">Newest</a>` : ""}${
      next ? html`<a href="/console/wallet?${next}">Older transactions</a>` : ""
    }</div>`;
  return page("Wallet", await partnerShell(request, ctx, "/console/wallet"), body);
}

async function monthlyPage(request: FastifyRequest, ctx: AppContext): Promise<string> {
  const partner_id = partnerOf(request);
  const month = monthOf(request);
  const { statement } = await monthlyStatement(ctx.db, { partner_id, month });
  const days = monthDays(month);
  const body = html`<p><a href="/console/wallet">← Wallet</a></p>
    ${monthPicker("/console/wallet/monthly", month)}
    ${monthlyTotals(statement, {
      pdf: `/console/wallet/statement.pdf?month=${month}`,
      csv: `/console/wallet/statement.csv?${rangeQuery(days)}`,
    })}`;
  return page(`Wallet statement ${month}`, await partnerShell(request, ctx, "/console/wallet"), body);
}

export const partnerWalletPages: ConsolePages = (scope, ctx) => {
  scope.get("/wallet/monthly", readsQuery("month"), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await monthlyPage(request, ctx)),
  );
  scope.get("/wallet/statement.pdf", readsQuery("month"), async (request, reply) =>
    sendMonthlyPdf(ctx, reply, { partner_id: partnerOf(request), month: monthOf(request), by: "partner" }),
  );
  scope.get("/wallet", readsQuery("from", "to", "cursor"), async (request, reply) =>
    reply.type("text/html; charset=utf-8").send(await walletPage(request, ctx)),
  );
  scope.get("/wallet/statement.csv", readsQuery("from", "to"), async (request, reply) => {
    const r = range(request);
    const partner_id = partnerOf(request);
    // The API's bound on exports at once, shared with it; given back when the response closes.
    exportSlot(ctx.csv_exports, partner_id, reply.raw);
    const chunks = await exportTransactions(ctx.db, { partner_id, ...r });
    const name = `statement${r.from ? `-${r.from}` : ""}${r.to ? `-to-${r.to}` : ""}.csv`;
    return reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${name}"`)
      .send(Readable.from(chunks) as never);
  });
};
