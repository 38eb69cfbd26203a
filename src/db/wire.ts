// Values to wire text and rows from wire text, for the statements pool.ts sends itself (a held write,
// a statement sent ahead): pg does both for the statements it sends, in modules it does not export
// (`pg/lib/utils.js`, `pg/lib/result.js`), so a pg release may move or change them. These follow
// pg 8's mapping exactly (test/db.wire.test.ts compares them with pg's on every kind of value we send),
// and a deferred write stores what the same write sent at once stores.
import { isDate } from "node:util/types";
import pg from "pg";

/** What a parameter goes out as: text, bytes (a Buffer goes as binary, as pg sends it) or NULL. */
export type WireValue = string | Buffer | null;

/** Nested arrays and toPostgres() results deeper than this are refused, not followed for ever. */
const MAX_DEPTH = 32;

/**
 * pg's own mapping (`prepareValue`): null and undefined are NULL; a Buffer or typed array goes as
 * bytes; a Date as ISO text with the offset (local time, or UTC when pg.defaults says so); an array
 * as an array literal; an object with toPostgres() as what that returns; any other object as JSON;
 * anything else by toString(). An invalid Date throws here (pg sends text PostgreSQL rejects).
 */
export function toWireValue(value: unknown, depth = 0): WireValue {
  if (depth > MAX_DEPTH) throw new Error(`a query value nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || value === undefined) return null;
  if (typeof value !== "object") return String(value);
  if (value instanceof Buffer) return value;
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (isDate(value)) return dateText(value);
  if (Array.isArray(value)) return arrayLiteral(value, depth);
  const convertible = value as { toPostgres?: (prepare: (v: unknown) => WireValue) => unknown };
  if (typeof convertible.toPostgres === "function") {
    return toWireValue(convertible.toPostgres(toWireValue), depth + 1);
  }
  return JSON.stringify(value);
}

/** A PostgreSQL array literal, elements quoted and escaped, bytes as \x hex, as pg writes one. */
function arrayLiteral(values: unknown[], depth: number): string {
  const elements = values.map((item) => {
    if (item === null || item === undefined) return "NULL";
    if (Array.isArray(item)) return arrayLiteral(item, depth + 1);
    if (ArrayBuffer.isView(item)) {
      return `\\\\x${Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString("hex")}`;
    }
    const text = String(toWireValue(item, depth + 1));
    return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  });
  return `{${elements.join(",")}}`;
}

function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new Error("an invalid Date as a query value");
  const utc = pg.defaults.parseInputDatesAsUTC === true;
  const offset_min = utc ? 0 : -date.getTimezoneOffset();
  // The wall clock at that offset, read through UTC getters.
  const wall = new Date(date.getTime() + offset_min * 60_000);
  let year = wall.getUTCFullYear();
  const bc = year < 1;
  if (bc) year = Math.abs(year) + 1; // year 0 is 1 BC
  const two = (n: number) => String(n).padStart(2, "0");
  const day = `${String(year).padStart(4, "0")}-${two(wall.getUTCMonth() + 1)}-${two(wall.getUTCDate())}`;
  const time = `${two(wall.getUTCHours())}:${two(wall.getUTCMinutes())}:${two(wall.getUTCSeconds())}`;
  const millis = String(wall.getUTCMilliseconds()).padStart(3, "0");
  const sign = offset_min < 0 ? "-" : "+";
  const zone = `${sign}${two(Math.floor(Math.abs(offset_min) / 60))}:${two(Math.abs(offset_min) % 60)}`;
  return `${day}T${time}.${millis}${zone}${bc ? " BC" : ""}`;
}

/** A column as a RowDescription describes it (pg-protocol's message, the fields we read). */
export type WireField = { name: string; dataTypeID: number; format: string } & pg.FieldDef;
type Parse = (text: string) => unknown;

/**
 * The answer of one statement whose messages pool.ts reads itself: rows parsed with the client's
 * type parsers (text format, which is all we ask for), counts from its CommandComplete, in the
 * shape pg gives a query's result.
 */
export class WireResult {
  readonly #parser: (oid: number) => Parse;
  #fields: WireField[] = [];
  #parsers: Parse[] = [];
  readonly #rows: Record<string, unknown>[] = [];

  constructor(parser: (oid: number) => Parse) {
    this.#parser = parser;
  }

  describe(fields: WireField[]): void {
    this.#fields = fields;
    this.#parsers = fields.map((field) => this.#parser(field.dataTypeID));
  }

  /** One DataRow; throws what a type parser throws (the caller fails this answer with it). */
  addRow(values: (string | null)[]): void {
    const row: Record<string, unknown> = {};
    values.forEach((text, i) => {
      row[this.#fields[i]!.name] = text === null ? null : this.#parsers[i]!(text);
    });
    this.#rows.push(row);
  }

  /** The finished answer, from the CommandComplete's tag ("INSERT 0 1", "UPDATE 3", "SELECT 2"). */
  complete(tag: string): pg.QueryResult {
    const [, command = "", first, second] = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/.exec(tag) ?? [];
    const count = second ?? first;
    return {
      command,
      rowCount: count === undefined ? null : Number.parseInt(count, 10),
      oid: second === undefined ? (null as unknown as number) : Number.parseInt(first!, 10),
      fields: this.#fields,
      rows: this.#rows,
    };
  }
}
