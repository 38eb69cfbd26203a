// Rendering for people: money from minor units, timestamps, aligned tables and key-value blocks.
// Every value shown comes from the database or the command line, so control characters are
// replaced: a partner named with terminal escape sequences must not repaint the operator's screen.

import { majorUnits } from "../lib/major-units.ts";
import type { MoneyBody } from "../shared/schemas.ts";

export type Money = MoneyBody;

/** A cell longer than this is cut with an ellipsis so one long value cannot wreck a table. */
const MAX_CELL_CHARS = 120;

export function money(amount_minor: number, currency: string): Money {
  return { amount_minor, currency };
}

/** 1250 USD -> "12.50 USD". Integer arithmetic only: a float never touches the amount. */
export function formatMoney(amount_minor: number, currency: string): string {
  return `${majorUnits(amount_minor, currency)} ${currency}`;
}

/** RFC 3339 UTC without milliseconds, as the API speaks (`2026-11-22T10:00:00Z`); null -> null. */
export function timestamp(value: Date | string | null): string | null {
  if (value === null) return null;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function cell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "-";
  const text = String(value).replace(/\p{Cc}/gu, "?");
  return text.length > MAX_CELL_CHARS ? `${text.slice(0, MAX_CELL_CHARS - 1)}…` : text;
}

export type Column = { header: string; align?: "left" | "right" };

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const cells = rows.map((row) => row.map((value) => cell(value)));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((row) => (row[index] ?? "").length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, index) => {
        if (index === columns.length - 1 && columns[index]?.align !== "right") return value;
        const width = widths[index] ?? 0;
        return columns[index]?.align === "right" ? value.padStart(width) : value.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.header)), ...cells.map(line)].join("\n");
}

/** An indented block of `label  value` lines with the values aligned. */
export function fields(pairs: readonly (readonly [string, string | number | null])[]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `  ${label.padEnd(width)}  ${cell(value)}`).join("\n");
}
