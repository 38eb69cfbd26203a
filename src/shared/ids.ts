// Prefixed, unguessable identifiers (Unkey's newId): the prefix tells a reader what an id is.
import { randomBytes } from "node:crypto";

const PREFIXES = {
  partner: "ptr",
  key: "key",
  account: "acc",
  transfer: "trf",
  cart: "cart",
  order: "ord",
  event: "evt",
  webhook_endpoint: "we",
  delivery: "dlv",
  user: "usr",
  audit: "aud",
  email: "eml",
  change: "chg",
  notice: "ntc",
} as const;

export type IdKind = keyof typeof PREFIXES;

/** What follows an id's prefix: newId makes 22 characters; 16-64 so that an older id still matches. */
export const ID_BODY = "[A-Za-z0-9_-]{16,64}";
/** An order id, as paths and the search box take them. */
export const ORDER_ID = new RegExp(`^${PREFIXES.order}_${ID_BODY}$`);
/** A partner id, as paths and the CLI take them. */
export const PARTNER_ID = new RegExp(`^${PREFIXES.partner}_${ID_BODY}$`);

/** 16 random bytes (128 bits) in base64url: 22 characters after the prefix. */
export function newId(kind: IdKind): string {
  return `${PREFIXES[kind]}_${randomBytes(16).toString("base64url")}`;
}
