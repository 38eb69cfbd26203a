// What every handler of the fake is given: its database, its credentials, the current fault
// settings and limits, and where webhooks go. One object so handlers stay plain functions.
import type pg from "pg";
import type { Credentials } from "./auth.ts";
import type { FaultSettings } from "./faults.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { WebhookSender } from "./webhooks.ts";

export type Context = {
  pool: pg.Pool;
  credentials: Credentials;
  settings: () => FaultSettings;
  limiter: RateLimiter;
  webhooks: WebhookSender;
  /** The SM-DP+ address put in every eSIM's `lpa` and `qrcode`. */
  smdp_address: string;
  /** Brands accepted in `brand_settings_name` (anything else: 422). */
  brands: string[];
  sleep: (ms: number) => Promise<void>;
  log: (message: string) => void;
  /** Usage answers served from the cache, per ICCID (Airalo caches usage 20 minutes). */
  usage_cache: Map<string, { at_ms: number; data: unknown }>;
};
