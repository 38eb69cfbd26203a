// Refs resolved against what exists when a request is sent.
import { randomBytes } from "node:crypto";
import { luhnCheckDigit } from "../../../src/lib/luhn.ts";
import { END_USER } from "../fixtures.ts";
import { callJson, newCart } from "./fixtures.ts";
import { Appended, Huge, RawSegment, Ref } from "./refs.ts";
import { type FuzzEnvironment, foreignOf, type Holder, type Holdings } from "./state.ts";

export function randomIccid(n: number): string {
  const body = `8901260${String(900_000_000_00 + n).padStart(11, "0")}`;
  return body + String(luhnCheckDigit(body));
}

/** Picks the n-th value of a kind from what exists now; may create a cart or a key first. */
export async function resolveRef(env: FuzzEnvironment, ref: Ref, used: ResolvedRefs): Promise<unknown> {
  const { pools, fixtures } = env;
  const own = pools.holdings[used.caller];
  const foreign = pools.holdings[foreignOf(used.caller)];
  const n = ref.n;
  const at = <T>(items: readonly T[], fallback: T): T => (items.length ? items[n % items.length]! : fallback);
  const bucket = n % 20;
  switch (ref.kind) {
    case "package_id":
      return bucket < 17 ? at(fixtures.packages, undefined)?.package_id : `nope-${n % 1000}`;
    case "external_package_id":
      return bucket < 17 ? at(fixtures.packages, undefined)?.external_package_id : `ext-nope-${n % 1000}`;
    case "topup_choice": {
      const choice =
        bucket < 18
          ? at(pools.topup_choices, fixtures.packages[0]!)
          : at(fixtures.packages, fixtures.packages[0]!);
      return ref.field === "external_package_id" ? choice.external_package_id : choice.package_id;
    }
    case "cart_key": {
      if (bucket < 11) {
        if (own.fresh_carts.length === 0) {
          const api_key = fixtures[used.caller].api_key;
          own.fresh_carts.push(await newCart(env, api_key, fixtures.packages[0]!.package_id));
        }
        const cart = own.fresh_carts[0]!;
        used.cart_key = cart;
        return cart;
      }
      if (bucket < 14) return at(own.used_carts, at(pools.holdings.main.expired_carts, "cart_none"));
      if (bucket < 15) return at(pools.holdings.main.expired_carts, "cart_none");
      if (bucket < 18) return at([...foreign.fresh_carts, ...foreign.used_carts], "cart_none");
      return `cart_${Buffer.from(String(n)).toString("base64url").padEnd(22, "A")}`;
    }
    case "order_id":
      // The operator's settle needs a pending order: a third of its picks are one (while any is left).
      if (used.operator && bucket < 7 && pools.pending_orders.length > 0)
        return at(pools.pending_orders, "ord_none");
      if (bucket < 14) return at(own.orders, "ord_none");
      if (bucket < 17) return at(foreign.orders, "ord_none");
      return `ord_${Buffer.from(String(n)).toString("base64url").padEnd(22, "A")}`;
    case "iccid":
      if (bucket < 14) return at(own.iccids, randomIccid(n));
      if (bucket < 17) return at(foreign.iccids, randomIccid(n));
      return randomIccid(n);
    case "partner_id":
      if (bucket < 17) return at(pools.partner_ids, fixtures.main.partner_id);
      return `ptr_${"A".repeat(16)}${n % 1000}`;
    case "key_id": {
      if (bucket < 12) {
        if (pools.revocable_key_ids.length === 0) {
          const issued = await callJson(
            env,
            "POST",
            `/admin/partners/${fixtures.sacrificial.partner_id}/api-keys`,
            {
              auth: fixtures.admin_token,
            },
          );
          pools.revocable_key_ids.push(issued.key_id);
        }
        const key_id = pools.revocable_key_ids[0]!;
        used.key_id = key_id;
        return key_id;
      }
      if (bucket < 16) return at(pools.revoked_key_ids, "key_none");
      return `key_${"B".repeat(16)}${n % 1000}`;
    }
    case "destination_code": {
      // A few destinations often (conditional requests need a repeat), any of them sometimes.
      if (bucket < 6) return at(["FR", "DE", "US"], "FR");
      const code = at(fixtures.destinations, "FR");
      if (bucket < 12) return code;
      if (bucket < 17) return code.toLowerCase();
      return at(["ZZ", "XX", "QQ"], "ZZ");
    }
    case "email":
      if (n % 25 === 0) return "decline@carrier.test";
      if (n % 25 === 1) return "unavailable@carrier.test";
      return at(
        ["ana@example.com", "ops+tag@example.org", "a@b.co", "x.y@sub.example.travel"],
        "ana@example.com",
      );
    case "phone":
      return at(
        ["+14155550123", "+33612345678", "+447911123456", "+5511912345678", "+10000000000"],
        END_USER.phone,
      );
    case "person_name":
      return at(["Ana", "Lima", "Zoë", "O'Brien", "李", "محمد", "Jean-Luc", " Padded "], "Ana");
    case "client_reference":
      return at(["booking-1", "booking-2", "ユーザー42", "x".repeat(128)], "booking-1");
    case "cursor":
      return bucket < 14 ? at(own.cursors, "bm9wZQ") : "bm9wZQ";
    case "idempotency_key":
      if (bucket < 10 || pools.idempotency_keys.length === 0) {
        const key = `fuzz-${n}-${randomBytes(4).toString("hex")}`;
        used.idempotency_key = key;
        return key;
      }
      return at(pools.idempotency_keys, "fuzz-none");
    case "etag": {
      const current = used.target === undefined ? undefined : pools.etags.get(used.target);
      const any = at([...pools.etags.values()], '"none"');
      if (bucket < 12) return current ?? any;
      if (bucket < 15) return `W/${current ?? any}`;
      if (bucket < 17) return `"stale", ${current ?? any}`;
      return any;
    }
    case "endpoint_id":
    case "delivery_id":
    case "event_id":
    case "webhook_url":
      return resolveWebhookRef(ref.kind, n, used, own, foreign);
    case "credit_reference":
      if (bucket < 12 || pools.credit_references.length === 0) {
        const reference = `fuzz-credit-${randomBytes(6).toString("hex")}`;
        used.credit_reference = reference;
        return reference;
      }
      return at(pools.credit_references, "fuzz-none");
  }
}

/** Webhook ids: mostly the caller's own (a delivery of the endpoint already chosen), some foreign or unknown. */
function resolveWebhookRef(
  kind: "endpoint_id" | "delivery_id" | "event_id" | "webhook_url",
  n: number,
  used: ResolvedRefs,
  own: Holdings,
  foreign: Holdings,
): string {
  const at = <T>(items: readonly T[], fallback: T): T => (items.length ? items[n % items.length]! : fallback);
  const bucket = n % 20;
  const unknown = (prefix: string) =>
    `${prefix}_${Buffer.from(String(n)).toString("base64url").padEnd(22, "A")}`;
  if (kind === "webhook_url") {
    if (bucket < 15) return `http://127.0.0.1:9/fuzz-${n % 1000}`;
    return at(["ftp://127.0.0.1/x", "not a url", "https://user:pw@127.0.0.1/x", "//no-scheme"], "not a url");
  }
  if (kind === "endpoint_id") {
    const chosen =
      bucket < 14
        ? at(own.endpoints, unknown("we"))
        : bucket < 17
          ? at(foreign.endpoints, unknown("we"))
          : unknown("we");
    used.endpoint_id = chosen;
    return chosen;
  }
  if (kind === "delivery_id") {
    const ofEndpoint = own.deliveries.filter((d) => d.endpoint_id === used.endpoint_id);
    if (bucket < 14)
      return at(ofEndpoint, at(own.deliveries, { delivery_id: unknown("dlv"), endpoint_id: "" })).delivery_id;
    if (bucket < 17)
      return at(foreign.deliveries, { delivery_id: unknown("dlv"), endpoint_id: "" }).delivery_id;
    return unknown("dlv");
  }
  if (bucket < 14) return at(own.events, unknown("evt"));
  if (bucket < 17) return at(foreign.events, unknown("evt"));
  return unknown("evt");
}

export type ResolvedRefs = {
  /** The webhook endpoint a path names, so its delivery can be picked to match. */
  endpoint_id?: string;
  /** Whose objects the request names: the caller's own, mostly. */
  caller: Holder;
  /** The operator's token: its order routes (refund, settle) name main's orders. */
  operator?: boolean;
  /** The request-target, once built (headers are resolved after it). */
  target?: string;
  cart_key?: string;
  key_id?: string;
  idempotency_key?: string;
  credit_reference?: string;
};

export async function resolveValue(
  env: FuzzEnvironment,
  value: unknown,
  used: ResolvedRefs,
): Promise<unknown> {
  if (value instanceof Ref) return resolveRef(env, value, used);
  if (value instanceof Huge) return value.toString();
  if (value instanceof Appended) {
    const base = await resolveValue(env, value.base, used);
    return `${typeof base === "string" ? base : JSON.stringify(base)}${value.suffix}`;
  }
  if (value instanceof RawSegment) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await resolveValue(env, item, used));
    return out;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a generated "__proto__" key stays a key, as it would in a client's JSON.
      Object.defineProperty(out, key, {
        value: await resolveValue(env, item, used),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
