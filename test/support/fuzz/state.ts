// The fuzz environment and what it holds: who calls, and the real objects their valid requests name.
import type { Kysely } from "kysely";
import type pg from "pg";
import type { Database } from "../../../src/db/schema.ts";
import type { App } from "../../../src/shared/http-types.ts";
import type { Built } from "./build.ts";
import type { Operation } from "./openapi.ts";
import type { AuthKind } from "./plans.ts";

export type FuzzPartner = { partner_id: string; api_key: string; key_id: string };

export type Fixtures = {
  admin_token: string;
  main: FuzzPartner;
  other: FuzzPartner;
  poor: FuzzPartner;
  /** Receives the keys the fuzzer may revoke. */
  sacrificial: FuzzPartner;
  revoked_key: string;
  wrong_env_key: string;
  unknown_key: string;
  packages: Array<{ package_id: string; external_package_id: string }>;
  destinations: string[];
  end_user: { email: string; phone: string; first_name: string; last_name: string };
};

/** The partners whose objects valid requests name; invalid credentials are sent with main's objects. */
export type Holder = "main" | "other" | "poor";

/** What one partner owns now: grows as the run buys and creates. */
export type Holdings = {
  fresh_carts: string[];
  used_carts: string[];
  expired_carts: string[];
  orders: string[];
  iccids: string[];
  cursors: string[];
  /** Webhook endpoints, their deliveries (with their endpoint) and events. */
  endpoints: string[];
  deliveries: Array<{ endpoint_id: string; delivery_id: string }>;
  events: string[];
};

/** What exists now: grows as the run buys, creates and revokes. */
export type Pools = {
  holdings: Record<Holder, Holdings>;
  topup_choices: Array<{ package_id: string; external_package_id: string }>;
  idempotency_keys: string[];
  credit_references: string[];
  /** ETags of answers by request-target, for conditional requests (304). */
  etags: Map<string, string>;
  revocable_key_ids: string[];
  revoked_key_ids: string[];
  partner_ids: string[];
  /** main's orders left pending (the carrier is down for them): the operator's settle needs one. */
  pending_orders: string[];
  /** Requests already answered, to send again exactly as they were (replays). */
  sent: Sent[];
};

export type Sent = { built: Built; auth: AuthKind; route: string | null; status: number; json: any };

export const MAX_SENT = 200;

export function emptyHoldings(): Holdings {
  return {
    fresh_carts: [],
    used_carts: [],
    expired_carts: [],
    orders: [],
    iccids: [],
    cursors: [],
    endpoints: [],
    deliveries: [],
    events: [],
  };
}

export function callerOf(auth: AuthKind): Holder {
  if (auth === "other") return "other";
  if (auth === "poor") return "poor";
  return "main";
}

export function foreignOf(holder: Holder): Holder {
  return holder === "main" ? "other" : "main";
}

export type FuzzEnvironment = {
  app: App;
  db: Kysely<Database>;
  pool: pg.Pool;
  /** http://127.0.0.1:<port> of the app. */
  url: string;
  port: number;
  doc: any;
  operations: Operation[];
  fixtures: Fixtures;
  pools: Pools;
  /** The route Fastify matched for the last request (null: none, e.g. 404 or a parser error). */
  lastRoute: { method: string; url: string | null } | null;
  close: () => Promise<void>;
};

export type Answer = { status: number; headers: Record<string, string>; body: Buffer; text: string };
