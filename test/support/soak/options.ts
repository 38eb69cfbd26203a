// The soak run's options, limits and the shapes its flows share.
import { endUser } from "../fixtures.ts";
import type { Rng } from "../rng.ts";

export type SoakOptions = {
  duration_s: number;
  rate: number;
  max_in_flight: number;
  carrier_latency_ms: number;
  seed: number;
  log: (line: string) => void;
};

export const PARTNERS = 8;
export const CREDIT_MINOR = 1_000_000_000;
export const SAMPLE_EVERY_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const DRAIN_TIMEOUT_MS = 60_000;
/** Bounds on what one partner remembers, so a long soak keeps a flat memory of its own. */
export const MAX_REMEMBERED = 200;
export const DESTINATIONS = ["FR", "DE", "ES", "IT", "JP", "US", "GB", "TH", "BR", "AU"];
export const SOAK_END_USER = endUser({ email: "soak@example.com", first_name: "Soak", last_name: "Test" });

export type Partner = { name: string; api_key: string; orders: string[]; iccids: string[] };

export type Flow = { name: string; weight: number; requests: number; run: (rng: Rng) => Promise<void> };
