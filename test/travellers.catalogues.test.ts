// The traveller's message catalogues (src/travellers/messages/*.json): every supported language has
// exactly English's keys, each message parses as ICU and uses the same placeholders (name and kind)
// as English, and resolveLanguage falls back from a regional tag to its base language, then English.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import { IntlMessageFormat } from "intl-messageformat";
import {
  type Catalogue,
  readCatalogue,
  resolveLanguage,
  SUPPORTED_LANGUAGES,
  translator,
} from "../src/travellers/translate.ts";

type Placeholder = string;

// intl-messageformat's AST: a node has `type` (1 argument, 2 number, 3 date, 4 time, 5 select,
// 6 plural, 7 pound, 8 tag) and `value`; select and plural nodes have `options` of sub-messages.
type AstNode = { type: number; value?: unknown; options?: Record<string, { value: AstNode[] }> };

function placeholders(nodes: readonly AstNode[], into = new Set<Placeholder>()): Set<Placeholder> {
  for (const node of nodes) {
    if (node.type >= 1 && node.type <= 6) into.add(`${String(node.value)}:${node.type}`);
    for (const option of Object.values(node.options ?? {})) placeholders(option.value, into);
  }
  return into;
}

/** Each key's placeholders; throws when a message is not valid ICU. */
function placeholderMap(language: string, catalogue: Catalogue): Map<string, string[]> {
  return new Map(
    Object.entries(catalogue).map(([key, source]) => {
      const ast = new IntlMessageFormat(source, language, undefined, { ignoreTag: true }).getAst();
      return [key, [...placeholders(ast as AstNode[])].sort()];
    }),
  );
}

/** What is wrong with `other` against English: missing and extra keys, placeholders that differ. */
function catalogueProblems(language: string, reference: Catalogue, other: Catalogue): string[] {
  const expected = placeholderMap("en", reference);
  const actual = placeholderMap(language, other);
  const problems: string[] = [];
  for (const key of expected.keys()) if (!actual.has(key)) problems.push(`${language}: missing ${key}`);
  for (const key of actual.keys()) if (!expected.has(key)) problems.push(`${language}: extra ${key}`);
  for (const [key, names] of expected) {
    const found = actual.get(key);
    if (found && found.join() !== names.join()) {
      problems.push(`${language}: ${key} has {${found.join(", ")}}, English {${names.join(", ")}}`);
    }
    if (found && other[key]!.trim() === "") problems.push(`${language}: ${key} is empty`);
  }
  return problems;
}

const english = readCatalogue("en");

test("every supported language has a catalogue with exactly English's keys and placeholders", () => {
  const files = readdirSync(new URL("../src/travellers/messages/", import.meta.url))
    .filter((name) => name.endsWith(".json"))
    .map((name) => name.slice(0, -".json".length))
    .sort();
  assert.deepEqual(files, [...SUPPORTED_LANGUAGES].sort(), "one catalogue per supported language, no other");
  assert.ok(SUPPORTED_LANGUAGES.length >= 12);
  const problems = SUPPORTED_LANGUAGES.flatMap((language) =>
    catalogueProblems(language, english, readCatalogue(language)),
  );
  assert.deepEqual(problems, []);
});

test("a catalogue missing a key, with an extra key or a renamed placeholder fails the check", () => {
  const { "page.heading": _dropped, ...missing } = readCatalogue("es");
  assert.deepEqual(catalogueProblems("es", english, missing), ["es: missing page.heading"]);
  const extra = { ...readCatalogue("es"), "page.unused": "Sobra" };
  assert.deepEqual(catalogueProblems("es", english, extra), ["es: extra page.unused"]);
  const renamed = { ...readCatalogue("es"), "email.subject": "Tu eSIM está lista: {paquete}" };
  assert.deepEqual(catalogueProblems("es", english, renamed), [
    "es: email.subject has {paquete:1}, English {package:1}",
  ]);
  const notPlural = {
    ...readCatalogue("fr"),
    "notice.expires_24h.subject": "Fin dans {hours} heures : {package}",
  };
  assert.equal(catalogueProblems("fr", english, notPlural).length, 1);
});

test("the translations are translations: no language but English repeats English's longer messages", () => {
  const sentences = Object.entries(english).filter(([, text]) => text.length > 40);
  for (const language of SUPPORTED_LANGUAGES.filter((tag) => tag !== "en")) {
    const catalogue = readCatalogue(language);
    const same = sentences.filter(([key, text]) => catalogue[key] === text).map(([key]) => key);
    assert.deepEqual(same, [], `${language} copies English`);
  }
});

test("a regional tag falls back to its base language, an unknown one to English", () => {
  assert.equal(resolveLanguage("pt-BR"), "pt");
  assert.equal(resolveLanguage("es-MX"), "es");
  assert.equal(resolveLanguage("ES"), "es");
  assert.equal(resolveLanguage("fr-CA"), "fr");
  assert.equal(resolveLanguage("zh"), "zh-Hans");
  assert.equal(resolveLanguage("zh-CN"), "zh-Hans");
  assert.equal(resolveLanguage("zh-hans-sg"), "zh-Hans");
  assert.equal(resolveLanguage("ar-EG"), "ar");
  assert.equal(resolveLanguage("xx"), "en");
  assert.equal(resolveLanguage("xx-YY"), "en");
  assert.equal(resolveLanguage("not a tag"), "en");
  assert.equal(resolveLanguage(""), "en");
  assert.equal(resolveLanguage(null), "en");
});

test("plurals, percentages, dates and data amounts follow the language", () => {
  const values = { hours: 24, package: "Japan 5 GB" };
  assert.match(translator("en").t("notice.expires_24h.subject", values), /24 hours/);
  assert.match(translator("ar").t("notice.expires_24h.subject", values), /24 ساعة/);
  assert.match(
    translator("ar").t("notice.expires_24h.subject", { ...values, hours: 2 }),
    /ساعتين/,
    "Arabic's dual",
  );
  assert.match(translator("fr").t("notice.usage_80.subject", { ratio: 0.8, package: "x" }), /80\s%/);
  assert.match(translator("tr").t("notice.usage_80.subject", { ratio: 0.8, package: "x" }), /%80/);
  assert.equal(translator("de").megabytes(5120), "5\u00a0GB", "a no-break space before the unit");
  assert.equal(translator("en").megabytes(512), "512 MB");
  assert.match(translator("ja").day("2026-12-01"), /2026年12月1日/);
  assert.throws(() => translator("en").t("no.such.key"), /no message "no.such.key" in en/);
});
