// The traveller's languages (contract "Travellers"): one catalogue of ICU messages per language in
// messages/<tag>.json, every catalogue with exactly the keys of English and the same placeholders
// (test/travellers.catalogues.test.ts), and the choice of the language a traveller reads.
//
// A requested tag (BCP 47, from the partner's submit or a page's ?lang=) resolves to the first
// supported of: the tag itself, its language and script (zh-Hans-CN -> zh-Hans), its language alone
// (pt-BR -> pt), then English. Chinese without a script means Simplified (zh, zh-CN -> zh-Hans).
// Dates and numbers are formatted by Intl in the resolved language; counts and percentages go
// through the message itself (ICU plural, number), so each language words them its own way.
import { readFileSync } from "node:fs";
import { IntlMessageFormat } from "intl-messageformat";

/** The languages with a catalogue; English is the last fallback. Order: the page's switcher. */
export const SUPPORTED_LANGUAGES = [
  "en",
  "es",
  "fr",
  "de",
  "it",
  "pt",
  "nl",
  "tr",
  "ar",
  "ja",
  "ko",
  "zh-Hans",
] as const;

export type Language = (typeof SUPPORTED_LANGUAGES)[number];

export const BASE_LANGUAGE: Language = "en";

/** Right-to-left languages among the supported: their documents say dir="rtl". */
const RIGHT_TO_LEFT: ReadonlySet<string> = new Set(["ar"]);

/** Each language's name in itself, for the switcher (a reader finds their own language by it). */
export const LANGUAGE_NAMES: Record<Language, string> = {
  en: "English",
  es: "Español",
  fr: "Français",
  de: "Deutsch",
  it: "Italiano",
  pt: "Português",
  nl: "Nederlands",
  tr: "Türkçe",
  ar: "العربية",
  ja: "日本語",
  ko: "한국어",
  "zh-Hans": "简体中文",
};

/** A BCP 47 tag as the API takes it: at most 35 characters (RFC 5646's longest useful tag). */
export const LANGUAGE_TAG_MAX_LENGTH = 35;

export type Catalogue = Readonly<Record<string, string>>;

const MESSAGES_DIR = new URL("./messages/", import.meta.url);

/** A catalogue as stored, for the completeness test and the loader alike. */
export function readCatalogue(language: string): Catalogue {
  const parsed: unknown = JSON.parse(readFileSync(new URL(`${language}.json`, MESSAGES_DIR), "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`messages/${language}.json is not an object of messages`);
  }
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== "string") throw new Error(`messages/${language}.json: ${key} is not a string`);
  }
  return parsed as Catalogue;
}

const LOWER_TO_SUPPORTED = new Map<string, Language>(
  SUPPORTED_LANGUAGES.map((tag) => [tag.toLowerCase(), tag]),
);

/** The well-formed canonical form of a tag, or null when it is not BCP 47 (Intl's own check). */
export function canonicalTag(requested: string): string | null {
  if (requested.length === 0 || requested.length > LANGUAGE_TAG_MAX_LENGTH) return null;
  try {
    return Intl.getCanonicalLocales(requested)[0] ?? null;
  } catch {
    return null;
  }
}

/** The supported language a traveller asking for `requested` reads: see the header. */
export function resolveLanguage(requested: string | null): Language {
  if (requested === null) return BASE_LANGUAGE;
  const tag = canonicalTag(requested.trim());
  if (tag === null) return BASE_LANGUAGE;
  const locale = new Intl.Locale(tag);
  const candidates = [
    tag,
    locale.script === undefined ? null : `${locale.language}-${locale.script}`,
    locale.language === "zh" ? "zh-Hans" : null,
    locale.language,
  ];
  for (const candidate of candidates) {
    const found = candidate === null ? undefined : LOWER_TO_SUPPORTED.get(candidate.toLowerCase());
    if (found !== undefined) return found;
  }
  return BASE_LANGUAGE;
}

export function isRightToLeft(language: string): boolean {
  return RIGHT_TO_LEFT.has(language);
}

export function textDirection(language: string): "rtl" | "ltr" {
  return isRightToLeft(language) ? "rtl" : "ltr";
}

export type MessageValues = Record<string, string | number>;

/** A language's messages, compiled once, and its Intl formats. */
export type Translator = {
  language: Language;
  dir: "ltr" | "rtl";
  /** The message `key` with its placeholders filled; throws on a key no catalogue has. */
  t(key: string, values?: MessageValues): string;
  /** An instant as a date and time in UTC, named as such (the traveller may be anywhere). */
  dateTime(instant: Date): string;
  /** A calendar day (YYYY-MM-DD) as the language writes it. */
  day(yyyy_mm_dd: string): string;
  /** Megabytes as the language writes data amounts: MB below 1 GB, GB (1 decimal) from it (1 GB = 1024 MB, as the catalog counts). */
  megabytes(mb: number): string;
};

/** As the catalog and carriers count data (catalog/default-catalog.ts): 1 GB is 1024 MB. */
const MB_PER_GB = 1024;

const translators = new Map<Language, Translator>();

/** The translator of the language `requested` resolves to (resolveLanguage). */
export function translator(requested: string | null): Translator {
  const language = resolveLanguage(requested);
  let found = translators.get(language);
  if (found === undefined) {
    found = buildTranslator(language, readCatalogue(language));
    translators.set(language, found);
  }
  return found;
}

// Compiled on first use and kept: at most one IntlMessageFormat per key per supported language.
function buildTranslator(language: Language, catalogue: Catalogue): Translator {
  const compiled = new Map<string, IntlMessageFormat>();
  const dateTime = new Intl.DateTimeFormat(language, {
    year: "numeric",
    month: "long",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZone: "UTC",
    timeZoneName: "short",
  });
  const day = new Intl.DateTimeFormat(language, { dateStyle: "long", timeZone: "UTC" });
  const mb = new Intl.NumberFormat(language, { style: "unit", unit: "megabyte", maximumFractionDigits: 0 });
  const gb = new Intl.NumberFormat(language, { style: "unit", unit: "gigabyte", maximumFractionDigits: 1 });
  return {
    language,
    dir: textDirection(language),
    t(key, values) {
      let message = compiled.get(key);
      if (message === undefined) {
        const source = catalogue[key];
        if (source === undefined) throw new Error(`no message "${key}" in ${language}`);
        // ignoreTag: menu paths ("Settings > Cellular") are text, not ICU's rich-text tags.
        message = new IntlMessageFormat(source, language, undefined, { ignoreTag: true });
        compiled.set(key, message);
      }
      return String(message.format(values));
    },
    dateTime: (instant) => dateTime.format(instant),
    day: (yyyy_mm_dd) => day.format(new Date(`${yyyy_mm_dd}T00:00:00Z`)),
    megabytes: (value) => (value >= MB_PER_GB ? gb.format(value / MB_PER_GB) : mb.format(value)),
  };
}
