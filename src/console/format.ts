// How the console writes money, instants and statuses for people.
import { minorUnitDigits } from "../lib/major-units.ts";
import { type Html, html } from "./html.ts";

type Money = { amount_minor: number; currency: string };

const formats = new Map<string, Intl.NumberFormat>();

function currencyFormat(currency: string): Intl.NumberFormat {
  let format = formats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat("en-US", { style: "currency", currency });
    formats.set(currency, format);
  }
  return format;
}

export function formatMoney(money: Money): string {
  return currencyFormat(money.currency).format(money.amount_minor / 10 ** minorUnitDigits(money.currency));
}

/**
 * "120.50" in the currency's major unit to minor units, exactly (no float arithmetic); null when
 * it is not a positive amount with at most the currency's minor digits.
 */
export function parseAmount(text: string, currency: string): number | null {
  const digits = minorUnitDigits(currency);
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text.trim().replaceAll(",", ""));
  if (!match || (match[2] ?? "").length > digits) return null;
  const minor = Number(match[1]) * 10 ** digits + Number((match[2] ?? "").padEnd(digits, "0") || "0");
  return Number.isSafeInteger(minor) && minor > 0 ? minor : null;
}

/** An instant as `2026-11-23 10:54 UTC`: one zone for everyone reading the same page. */
export function formatInstant(value: string | Date | null): string {
  if (value === null) return "—";
  const date = typeof value === "string" ? new Date(value) : value;
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function statusPill(status: string): Html {
  return html`<span class="status ${status}">${status}</span>`;
}

export function megabytes(mb: number | null): string {
  if (mb === null) return "unlimited";
  return mb >= 1024 ? `${(mb / 1024).toFixed(mb % 1024 === 0 ? 0 : 1)} GB` : `${mb} MB`;
}
