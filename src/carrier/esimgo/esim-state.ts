// After the sale: one eSIM's state at eSIM Go as our EsimSignal, from GET /esims/{iccid} (the
// profile) and GET /esims/{iccid}/bundles?includeUsed=true (every assignment, its bytes and state)
// (docs/suppliers/esimgo.md §3, §5). An unknown ICCID is a 400 there, not a 404 (§7).
//   profile:  profileStatus Released -> released; Downloaded, Installed -> installed (at
//             firstInstalledDateTime); Unavailable (no longer available to a device) -> deleted;
//             anything else -> unavailable (not guessed).
//   bundles:  one per assignment, oldest first: processing, queued -> queued; active -> active;
//             depleted -> depleted; expired, lapsed, revoked -> expired. Bytes become MB
//             (1 MB = 1000000 bytes, as the docs' 1 GB = 1000000000); unlimited: data_mb null.
//             Named by our reference: the assignment whose assignmentReference starts with the
//             eSIM Go order reference we recorded (the docs' example "<uuid>-0"; UNCONFIRMED that
//             it is the order's), else by bundle name in the order we bought them, else
//             `esimgo:<assignmentReference>` (a bundle bought outside this service).
import type pg from "pg";
import { isValidIccid } from "../../lib/luhn.ts";
import { MAX_SIGNAL_BUNDLES } from "../../protocols/esim-signal.ts";
import type {
  CarrierBundle,
  CarrierBundleStatus,
  EsimSignal,
  EsimStateOutcome,
  ProfileState,
} from "../carrier.ts";
import { type EsimGoClient, reasonOf } from "./client.ts";
import { BYTES_PER_MB } from "./config.ts";
import { type IntentRow, ordersOfEsim } from "./esimgo.sql.ts";
import { type Assignment, type EsimDetails, parseAssignments, parseEsimDetails } from "./shapes.ts";

export type StateDeps = { pool: pg.Pool; client: EsimGoClient };

const BUNDLE_STATES: Record<string, CarrierBundleStatus> = {
  processing: "queued",
  queued: "queued",
  active: "active",
  depleted: "depleted",
  expired: "expired",
  lapsed: "expired",
  revoked: "expired",
};

export async function esimState(deps: StateDeps, iccid: string): Promise<EsimStateOutcome> {
  if (!isValidIccid(iccid)) return { kind: "not_found" };
  const path = `/esims/${encodeURIComponent(iccid)}`;
  const details = await deps.client.call(path);
  if (details.kind === "rejected") return { kind: "not_found" };
  if (details.kind !== "ok") return { kind: "unavailable", reason: reasonOf(details) };
  const esim = parseEsimDetails(details.body);
  if (esim === null || esim.iccid !== iccid)
    return { kind: "unavailable", reason: "eSIM Go answered a malformed eSIM" };
  const profile = profileOf(esim);
  if (profile === null)
    return { kind: "unavailable", reason: `eSIM Go profileStatus "${esim.profile_status}" is unknown` };
  const bundles = await deps.client.call(`${path}/bundles`, { query: { includeUsed: "true", limit: "200" } });
  if (bundles.kind === "rejected") return { kind: "not_found" };
  if (bundles.kind !== "ok") return { kind: "unavailable", reason: reasonOf(bundles) };
  const assignments = parseAssignments(bundles.body);
  if (assignments === null) return { kind: "unavailable", reason: "eSIM Go answered malformed bundles" };
  const ours = await ordersOfEsim(deps.pool, iccid);
  const signal: EsimSignal = {
    iccid,
    as_of: new Date().toISOString(),
    profile,
    bundles: bundlesOf(assignments, ours).slice(0, MAX_SIGNAL_BUNDLES),
  };
  return { kind: "ok", value: signal };
}

function profileOf(esim: EsimDetails): EsimSignal["profile"] | null {
  const states: Record<string, ProfileState> = {
    released: "released",
    downloaded: "installed",
    installed: "installed",
    unavailable: "deleted",
  };
  const state = states[esim.profile_status];
  if (state === undefined) return null;
  return {
    state,
    installed_at: state === "installed" ? esim.first_installed_at : null,
    deleted_at: null,
  };
}

function bundlesOf(assignments: Assignment[], ours: IntentRow[]): CarrierBundle[] {
  const sorted = [...assignments].sort((a, b) => (a.assigned_at ?? "").localeCompare(b.assigned_at ?? ""));
  const unnamed = [...ours];
  const take = (row: IntentRow) => unnamed.splice(unnamed.indexOf(row), 1)[0]!.reference;
  const byOrder = sorted.map((one) => {
    const row = unnamed.find((candidate) => one.reference.startsWith(`${candidate.order_reference}-`));
    return row ? take(row) : null;
  });
  return sorted.map((one, index) => {
    let reference = byOrder[index] ?? null;
    if (reference === null) {
      const row = unnamed.find((candidate) => candidate.item === one.name);
      reference = row ? take(row) : `esimgo:${(one.reference || one.id).slice(0, 190)}`;
    }
    const status = BUNDLE_STATES[one.state] ?? "expired";
    const data_mb = one.unlimited ? null : Math.round(one.initial_bytes / BYTES_PER_MB);
    const used_bytes = one.unlimited ? 0 : Math.max(0, one.initial_bytes - one.remaining_bytes);
    return {
      reference,
      status,
      data_mb,
      data_used_mb: Math.min(data_mb ?? Number.POSITIVE_INFINITY, Math.round(used_bytes / BYTES_PER_MB)),
      activated_at: status === "queued" ? null : one.started_at,
      expires_at: status === "queued" ? null : one.ends_at,
    };
  });
}
