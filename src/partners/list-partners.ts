// Operator use cases (the CLI, the sandbox start-up hint): partners and their keys, read only.
import type { Executor } from "../db/executor.ts";
import {
  type KeySummary,
  listKeys,
  listPartners,
  type PartnerSummary,
  partnerById,
  partnerStanding,
} from "./partners.sql.ts";

export type { KeySummary, PartnerSummary };

/** The newest `limit` partners. */
export async function recentPartners(db: Executor, limit: number): Promise<PartnerSummary[]> {
  return listPartners(db, limit);
}

export async function findPartner(db: Executor, partner_id: string): Promise<PartnerSummary | null> {
  return partnerById(db, partner_id);
}

/** The partner's keys, oldest first, revoked ones included. */
export async function partnerKeys(db: Executor, partner_id: string): Promise<KeySummary[]> {
  return listKeys(db, partner_id);
}

/** Whether the partner is suspended (a console session's check on every change it makes). */
export async function partnerSuspended(db: Executor, partner_id: string): Promise<boolean> {
  return (await partnerStanding(db, partner_id))?.status === "suspended";
}
