// `from` and `to` query dates of a list (orders, eSIMs, the wallet's statement and its CSV): UTC
// days, both ends included, read here for all of them, so that one date range means the same rows
// on every list.
import { Type } from "typebox";
import { ApiError, type FieldErrorCode } from "./errors.ts";

/** A date query parameter's schema pattern; the calendar check is dayStart's. */
export const DATE_PATTERN = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
/** The same, for a form's value (a console page reads the query string without the schema). */
export const DATE = new RegExp(DATE_PATTERN);

export type DayRange = { from: string | null; to: string | null };
/** [from 00:00 UTC, the day after `to` 00:00 UTC); null: that end is open. */
export type TimeWindow = { from: Date | null; until: Date | null };

function invalid(field: string, message: string, code: FieldErrorCode = "invalid_format"): ApiError {
  return new ApiError("invalid_request", `${field} ${message}.`, { errors: [{ field, code, message }] });
}

function dayStart(field: string, date: string): Date {
  const parsed = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date) {
    throw invalid(field, "is not a calendar date (YYYY-MM-DD)");
  }
  return parsed;
}

/** 400 invalid_request when a date is not a calendar day or `from` is after `to`. */
export function dayWindow(range: DayRange): TimeWindow {
  const from = range.from === null ? null : dayStart("from", range.from);
  const to = range.to === null ? null : dayStart("to", range.to);
  if (from && to && from > to) throw invalid("from", "is after to");
  const until = to === null ? null : new Date(to.getTime() + 86_400_000);
  return { from, until };
}

/** `from` and `to` as query parameters. */
export const dateParameters = {
  from: Type.Optional(
    Type.String({
      format: "date",
      pattern: DATE_PATTERN,
      description: "Created on or after this UTC day (YYYY-MM-DD). After `to`: 400 `invalid_request`.",
    }),
  ),
  to: Type.Optional(
    Type.String({
      format: "date",
      pattern: DATE_PATTERN,
      description: "Created on or before this UTC day (YYYY-MM-DD).",
    }),
  ),
};
