// A month of a wallet as both consoles show it (issue 32, finance): a month picker, the API's
// monthly totals (opening + the five totals = closing) and the downloads of that month.
import type { FastifyRequest } from "fastify";
import type { MonthlyStatement } from "../wallet/monthly-statement.ts";
import { formatMoney } from "./format.ts";
import { type Html, html } from "./html.ts";
import { scrollTable } from "./layout.ts";
import { queryValue } from "./request.ts";

/** The `month` asked for (YYYY-MM, checked by the statement itself), or the month under way (UTC). */
export function monthOf(request: FastifyRequest, now = new Date()): string {
  return queryValue(request, "month") ?? now.toISOString().slice(0, 7);
}

/** The month's first and last UTC day, for the CSV download of the same rows. */
export function monthDays(month: string): { from: string; to: string } {
  const [year, index] = [Number(month.slice(0, 4)), Number(month.slice(5, 7))];
  return { from: `${month}-01`, to: new Date(Date.UTC(year, index, 0)).toISOString().slice(0, 10) };
}

export function monthPicker(action: string, month: string): Html {
  return html`<form method="get" action="${action}" class="panel"><div class="fields">
      <div><label for="month">Month (UTC)</label><input id="month" name="month" type="month" value="${month}" required pattern="[0-9]{4}-[0-9]{2}"></div>
      <div class="submit"><button type="submit">Show month</button></div>
    </div></form>`;
}

const ROWS: Array<[keyof MonthlyStatement, string]> = [
  ["opening_balance", "Opening balance"],
  ["credits", "Credits"],
  ["purchases", "Purchases"],
  ["topups", "Top-ups"],
  ["refunds", "Refunds"],
  ["adjustments", "Adjustments"],
  ["closing_balance", "Closing balance"],
];

/** The totals, then the month's downloads (`pdf`, and `csv` when the viewer may export it). */
export function monthlyTotals(statement: MonthlyStatement, links: { pdf: string; csv: string | null }): Html {
  const rows = ROWS.map(([key, label]) => {
    const total = statement[key] as { amount_minor: number; currency: string };
    const amount = formatMoney(total);
    return html`<tr><th scope="row">${label}</th>
      <td class="num" data-testid="${key}">${key.endsWith("balance") ? html`<strong>${amount}</strong>` : amount}</td></tr>`;
  });
  return html`<h2>Statement ${statement.month}</h2>
    ${scrollTable(
      `Totals of ${statement.month}`,
      html`<table><thead><tr><th scope="col">Total</th><th scope="col" class="num">Amount</th></tr></thead>
        <tbody>${rows}</tbody></table>`,
    )}
    <p class="hint">Opening balance + credits + purchases + top-ups + refunds + adjustments = closing balance.
      A transaction belongs to the month it was posted in (UTC).</p>
    <div class="actions"><a class="button" href="${links.pdf}" download>Download PDF</a>${
      links.csv ? html` <a class="button quiet-accent" href="${links.csv}" download>Download CSV</a>` : ""
    }</div>`;
}
