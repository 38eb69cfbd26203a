// The monthly statement as a PDF (issue 32): the month's totals, then every transaction oldest
// first, rendered with pdfkit (its built-in Helvetica: no font file, no network). A document a
// finance team files: the identity opening + movements = closing printed under the totals.
import PDFDocument from "pdfkit";
import { majorUnits } from "../lib/major-units.ts";
import type { StatementLine } from "./list-transactions.ts";
import type { MonthlyStatement } from "./monthly-statement.ts";

const COLUMNS = [
  { title: "Posted (UTC)", x: 50, width: 110 },
  { title: "Type", x: 160, width: 55 },
  { title: "Order or reference", x: 215, width: 170 },
  { title: "Amount", x: 385, width: 75, right: true },
  { title: "Balance after", x: 460, width: 85, right: true },
] as const;

/**
 * Under a row, in full and wrapped (a 500-character reason does not fit a column): an adjustment's
 * reason, and an order's own client reference and ICCID, so the page names what the money was for.
 */
function detail(doc: PDFKit.PDFDocument, t: StatementLine): void {
  const parts = [
    t.description,
    t.client_reference === null ? null : `Client reference ${t.client_reference}`,
    t.iccid === null ? null : `ICCID ${t.iccid}`,
  ].filter((part) => part !== null);
  if (parts.length === 0) return;
  if (doc.y > doc.page.height - 70) doc.addPage();
  doc.font("Helvetica").fontSize(7.5).fillColor("#444444");
  doc.text(parts.join(" · "), 215, doc.y, { width: 330 });
  doc.fillColor("#000000");
  doc.moveDown(0.35);
}

function row(doc: PDFKit.PDFDocument, cells: string[], bold = false): void {
  if (doc.y > doc.page.height - 70) doc.addPage();
  const y = doc.y;
  doc.font(bold ? "Helvetica-Bold" : "Helvetica").fontSize(8.5);
  for (const [i, column] of COLUMNS.entries()) {
    doc.text(cells[i] ?? "", column.x, y, {
      width: column.width,
      align: "right" in column ? "right" : "left",
      lineBreak: false,
      ellipsis: true,
    });
  }
  doc.moveDown(0.35);
}

/** The statement as PDF bytes. */
export function statementPdf(
  statement: MonthlyStatement,
  transactions: StatementLine[],
  partner: { partner_id: string; name: string },
): Promise<Buffer> {
  const doc = new PDFDocument({
    size: "A4",
    margin: 50,
    info: {
      Title: `Wallet statement ${statement.month}`,
      Author: "Partner eSIM Ordering",
      Subject: partner.name,
    },
  });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  const currency = statement.opening_balance.currency;
  doc.font("Helvetica-Bold").fontSize(16).text(`Wallet statement ${statement.month}`);
  doc.font("Helvetica").fontSize(10).text(`${partner.name} (${partner.partner_id})`);
  doc.text(`Amounts in ${currency}; a transaction belongs to the month it was posted in (UTC).`);
  doc.moveDown();
  const lines: Array<[string, number]> = [
    ["Opening balance", statement.opening_balance.amount_minor],
    ["Credits", statement.credits.amount_minor],
    ["Purchases", statement.purchases.amount_minor],
    ["Top-ups", statement.topups.amount_minor],
    ["Refunds", statement.refunds.amount_minor],
    ["Adjustments", statement.adjustments.amount_minor],
    ["Closing balance", statement.closing_balance.amount_minor],
  ];
  for (const [label, amount] of lines) {
    const y = doc.y;
    const bold = label.endsWith("balance");
    doc
      .font(bold ? "Helvetica-Bold" : "Helvetica")
      .fontSize(10)
      .text(label, 50, y, { width: 200 });
    doc.text(`${majorUnits(amount, currency)} ${currency}`, 250, y, { width: 120, align: "right" });
  }
  doc.moveDown();
  doc
    .font("Helvetica")
    .fontSize(9)
    .text("Opening balance + credits + purchases + top-ups + refunds + adjustments = closing balance.", 50);
  doc.moveDown();
  doc.font("Helvetica-Bold").fontSize(12).text(`Transactions (${transactions.length})`, 50);
  doc.moveDown(0.5);
  row(
    doc,
    COLUMNS.map((c) => c.title),
    true,
  );
  for (const t of transactions) {
    row(doc, [
      t.created_at.replace("T", " ").slice(0, 19),
      t.type,
      t.order_id ?? t.reference ?? "",
      majorUnits(t.amount.amount_minor, currency),
      majorUnits(t.balance_after.amount_minor, currency),
    ]);
    detail(doc, t);
  }
  if (transactions.length === 0) doc.font("Helvetica").fontSize(9).text("No transactions this month.", 50);
  doc.end();
  return done;
}
