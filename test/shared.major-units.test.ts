// Minor units to major units, worked out in one place (lib/major-units.ts) for the statement's
// CSV and PDF, the CLI's output and the console's amount forms: each keeps the text it wrote.
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatMoney } from "../src/cli/output.ts";
import { parseAmount } from "../src/console/format.ts";
import { majorUnits, minorUnitDigits } from "../src/lib/major-units.ts";
import { dayWindow } from "../src/shared/day-range.ts";

test("the exponent is ISO 4217's: USD 2, JPY 0, KWD 3", () => {
  assert.deepEqual(["USD", "JPY", "KWD"].map(minorUnitDigits), [2, 0, 3]);
});

test("the CSV's and the CLI's amounts: integer digits, the sign in front, padded fractions", () => {
  const cases: Array<[number, string, string]> = [
    [1250, "USD", "12.50"],
    [-350, "USD", "-3.50"],
    [5, "USD", "0.05"],
    [0, "USD", "0.00"],
    [-350, "JPY", "-350"],
    [7, "KWD", "0.007"],
    [-123456789, "KWD", "-123456.789"],
  ];
  for (const [minor, currency, text] of cases) {
    assert.equal(majorUnits(minor, currency), text, `${minor} ${currency}`);
    assert.equal(formatMoney(minor, currency), `${text} ${currency}`, `CLI ${minor} ${currency}`);
  }
});

test("the console's amount form reads major units with the same exponent", () => {
  assert.equal(parseAmount("12.5", "USD"), 1250);
  assert.equal(parseAmount("350", "JPY"), 350);
  assert.equal(parseAmount("3.5", "JPY"), null);
  assert.equal(parseAmount("0.007", "KWD"), 7);
  assert.equal(parseAmount("0.001", "USD"), null);
});

test("a date range is UTC days, both ends included, for every list and the statement", () => {
  assert.deepEqual(dayWindow({ from: "2026-11-01", to: "2026-11-30" }), {
    from: new Date("2026-11-01T00:00:00Z"),
    until: new Date("2026-12-01T00:00:00Z"),
  });
  assert.throws(() => dayWindow({ from: "2026-02-30", to: null }), /calendar date/);
  assert.throws(() => dayWindow({ from: "2026-11-02", to: "2026-11-01" }), /after to/);
});
