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
} as const;

export type IdKind = keyof typeof PREFIXES;

/** 16 random bytes (128 bits) in base64url: 22 characters after the prefix. */
export function newId(kind: IdKind): string {
  return `${PREFIXES[kind]}_${randomBytes(16).toString("base64url")}`;
}
