// A case-insensitive prefix match that a `text_pattern_ops` index on lower(column) can bound.
//
// `lower(column) like 'abc%'` is index-bounded only when the planner sees the pattern: with a
// parameter under a generic plan (pool.ts prepares a statement run often, and PostgreSQL then
// plans it once for any value) it is a filter over the partner's every row. The explicit range
// [lower(prefix), the next prefix) bounds the index scan under any plan; the `like` beside it
// keeps the meaning readable and costs one comparison per row found. Ranges compare bytes
// (the ~>=~ / ~<~ operators of text_pattern_ops), and UTF-8's byte order is code point order,
// so the strings starting with P are exactly [P, P with its last code point plus one).
//
// Case folds by ICU's root locale (the collation "und-x-icu"), not the database's LC_CTYPE: with the C
// locale (the embedded PostgreSQL's, and a common server default) lower() folds ASCII letters only,
// and a support person typing MÜLLER would not find Müller. The indexes of migration 0028 hold the
// same expression, so PostgreSQL must be built with ICU (every PGDG and distribution package is).
import { type RawBuilder, sql } from "kysely";

/** `text` lower-cased by Unicode rules whatever the database's locale: the indexes' expression. */
export function folded(text: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`lower(${text} collate "und-x-icu")`;
}

/**
 * `lower_column` (folded(x), the expression an index holds) starts with `prefix`, compared
 * case-insensitively (both folded). `like` is the prefix escaped for `like` (`\`
 * escapes) with `%` appended. The prefix must not end in U+10FFFF (search-query.ts refuses it).
 */
export function startsWithLower(
  lower_column: RawBuilder<unknown>,
  prefix: string,
  like: string,
): RawBuilder<boolean> {
  const low = folded(sql`${prefix}::text`);
  // The next code point after the last one; U+D7FF's next valid one is U+E000 (no surrogates in text).
  const last = sql`ascii(right(${low}, 1))`;
  // Parenthesised: || and ~<~ are operators of one precedence, read left to right.
  const high = sql`(left(${low}, -1) || chr(case when ${last} = 55295 then 57344 else ${last} + 1 end))`;
  return sql<boolean>`(${lower_column} ~>=~ ${low} and ${lower_column} ~<~ ${high}
    and ${lower_column} like ${folded(sql`${like}::text`)} escape '\\')`;
}
