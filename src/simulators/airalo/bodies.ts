// The request bodies Airalo accepts: the docs' curl examples send multipart/form-data
// (`--form 'client_id=...'`, `sharing_option[]`), the PHP and Python SDKs urlencoded forms, the
// Node SDK JSON, and one revision of the refund page a raw JSON body as text/plain
// (docs/suppliers/airalo.md §1 "Content types on POSTs"). All four become one plain object here;
// `name[]` and `name[0]` form fields become arrays, as PHP/Laravel reads them.
import type { FastifyInstance } from "fastify";

export type Fields = Record<string, unknown>;

/** A form's fields are short; anything near this is not an Airalo request. */
const MAX_FIELDS = 200;

export function registerBodyParsers(app: FastifyInstance): void {
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_request, body, done) => {
      done(null, fromPairs([...new URLSearchParams(body as string)]));
    },
  );
  app.addContentTypeParser("multipart/form-data", { parseAs: "string" }, (request, body, done) => {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(request.headers["content-type"] ?? "");
    if (!boundary)
      return done(Object.assign(new Error("multipart body without a boundary"), { statusCode: 400 }));
    done(null, fromPairs(multipartPairs(body as string, boundary[1] ?? boundary[2]!)));
  });
  app.addContentTypeParser("text/plain", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(null, {});
    }
  });
}

/** The text parts of a multipart body as [name, value] pairs (files are not part of this API). */
function multipartPairs(body: string, boundary: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const part of body.split(`--${boundary}`).slice(1, MAX_FIELDS + 1)) {
    if (part.startsWith("--")) break;
    const split = part.indexOf("\r\n\r\n");
    if (split < 0) continue;
    const name = /name="([^"]*)"/i.exec(part.slice(0, split));
    if (!name) continue;
    pairs.push([name[1]!, part.slice(split + 4).replace(/\r\n$/, "")]);
  }
  return pairs;
}

function fromPairs(pairs: [string, string][]): Fields {
  const fields: Fields = {};
  for (const [rawName, value] of pairs.slice(0, MAX_FIELDS)) {
    const array = /^([^[]+)\[(\d*)\]$/.exec(rawName);
    if (!array) {
      fields[rawName] = value;
      continue;
    }
    const list = Array.isArray(fields[array[1]!]) ? (fields[array[1]!] as unknown[]) : [];
    list.push(value);
    fields[array[1]!] = list;
  }
  return fields;
}

/** A form or JSON value as text; numbers arrive as numbers from JSON and as text from forms. */
export function text(fields: Fields, name: string): string | null {
  const value = fields[name];
  if (typeof value === "string") return value.trim() === "" ? null : value;
  if (typeof value === "number") return String(value);
  return null;
}
