// The ES2+ functions as the SM-DP+ simulator performs them (SGP.22 5.3.1-5.3.4): each locks the
// profile's row, checks the transition, moves it and answers the function's fields, or Failed with
// the status code a real SM-DP+ gives, taken from the sourced table (../protocols/es2plus.ts), never
// from our client's constants: unknown ICCID 8.2.1/3.9, a state that does not allow the function
// 8.2.1/3.5, DownloadOrder on a taken ICCID 8.2.1/3.3 (or 3.7, as some vendors answer:
// download_taken_reason), unknown or exhausted profile type 8.2.5/3.9 and 3.7, a matching ID in use
// 8.2.6/3.3 or not this profile's 8.2.6/3.10, a missing field 1.6/2.2, an invalid one 1.6/2.1.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { ES2PLUS_CODES as CODE, type Es2Code } from "../../protocols/es2plus.ts";
import {
  lockFreeProfileOfType,
  lockProfile,
  matchingIdTaken,
  moveProfile,
  type ProfileState,
  profileTypeExists,
  type SmdpProfile,
} from "./profiles.sql.ts";

export type Es2Result =
  | { status: "Executed-Success"; fields: Record<string, unknown>; changed: SmdpProfile | null }
  | { status: "Failed"; subjectCode: string; reasonCode: string; message: string };

type Body = Record<string, unknown>;

/** What the simulator was told to be: a vendor's answer where vendors differ (POST /control). */
export type Es2Dialect = {
  /** DownloadOrder of an ICCID not AVAILABLE: SGP.22's 8.2.1/3.3, or 8.2.1/3.7 as some vendors say. */
  download_taken_reason: "3.3" | "3.7";
};

export type Es2Context = Es2Dialect & { smdp_address: string };

export const failed = (code: Es2Code, message: string): Es2Result => ({
  status: "Failed",
  subjectCode: code.subjectCode,
  reasonCode: code.reasonCode,
  message,
});
const success = (fields: Record<string, unknown>, changed: SmdpProfile | null = null): Es2Result => ({
  status: "Executed-Success",
  fields,
  changed,
});
const missing = (name: string) => failed(CODE.missing, `${name} is missing`);
const invalid = (name: string) => failed(CODE.invalid, `${name} is invalid`);
const unknownIccid = (iccid: string) => failed(CODE.iccidUnknown, `ICCID ${iccid} is unknown`);
const illegal = (profile: SmdpProfile, fn: string) =>
  failed(CODE.invalidTransition, `${fn} is not allowed for a profile in state ${profile.state}`);

/** 19 or 20 digits, a 19-digit one possibly padded with F; undefined when absent. */
export function readIccid(value: unknown): string | null | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") return null;
  const digits = /^[0-9]{19}[Ff]$/.test(value) ? value.slice(0, 19) : value;
  return /^[0-9]{19,20}$/.test(digits) ? digits : null;
}

const EID = /^[0-9]{32}$/;
const MATCHING_ID = /^[0-9A-Z-]{1,64}$/;

export async function downloadOrder(pool: pg.Pool, body: Body, context: Es2Context): Promise<Es2Result> {
  const iccid = readIccid(body.iccid);
  if (iccid === null) return invalid("iccid");
  if (body.eid !== undefined && (typeof body.eid !== "string" || !EID.test(body.eid))) return invalid("eid");
  const type = body.profileType;
  if (type !== undefined && (typeof type !== "string" || type === "" || type.length > 64))
    return invalid("profileType");
  if (iccid === undefined && type === undefined)
    return failed(CODE.conditionalMissing, "iccid or profileType is required");
  return inTransaction(pool, async (client) => {
    let profile: SmdpProfile | null;
    if (iccid !== undefined) {
      profile = await lockProfile(client, iccid);
      if (!profile) return unknownIccid(iccid);
      if (type !== undefined && profile.profile_type !== type)
        return failed(CODE.profileTypeMismatch, "profileType is not this ICCID's");
      if (profile.state !== "AVAILABLE") {
        const code = context.download_taken_reason === "3.7" ? CODE.iccidUnavailable : CODE.iccidInUse;
        return failed(code, `ICCID ${iccid} is not available (${profile.state})`);
      }
    } else {
      if (!(await profileTypeExists(client, type as string)))
        return failed(CODE.profileTypeUnknown, "profileType is unknown");
      profile = await lockFreeProfileOfType(client, type as string);
      if (!profile) return failed(CODE.profileTypeExhausted, `no profile of type ${type} is available`);
    }
    const eid = typeof body.eid === "string" ? body.eid : null;
    const moved = await moveProfile(client, profile, eid ? "LINKED" : "ALLOCATED", "downloadOrder", { eid });
    return success({ iccid: moved.iccid }, moved);
  });
}

export async function confirmOrder(pool: pg.Pool, body: Body, context: Es2Context): Promise<Es2Result> {
  const iccid = readIccid(body.iccid);
  if (iccid === undefined) return missing("iccid");
  if (iccid === null) return invalid("iccid");
  if (body.releaseFlag === undefined) return missing("releaseFlag");
  if (typeof body.releaseFlag !== "boolean") return invalid("releaseFlag");
  const given = body.matchingId;
  if (given !== undefined && (typeof given !== "string" || !MATCHING_ID.test(given)))
    return invalid("matchingId");
  return inTransaction(pool, async (client) => {
    const profile = await lockProfile(client, iccid);
    if (!profile) return unknownIccid(iccid);
    if (profile.state !== "ALLOCATED" && profile.state !== "LINKED") return illegal(profile, "ConfirmOrder");
    const matching_id = (given as string | undefined) ?? newMatchingId();
    if (await matchingIdTaken(client, matching_id, iccid))
      return failed(CODE.matchingIdInUse, "matchingId is already in use");
    const to: ProfileState = body.releaseFlag ? "RELEASED" : "CONFIRMED";
    const moved = await moveProfile(client, profile, to, "confirmOrder", { matching_id });
    return success(
      {
        ...(moved.eid ? { eid: moved.eid } : {}),
        matchingId: matching_id,
        smdpAddress: context.smdp_address,
      },
      moved,
    );
  });
}

const CANCELLABLE: readonly ProfileState[] = ["ALLOCATED", "LINKED", "CONFIRMED", "RELEASED"];

export async function cancelOrder(pool: pg.Pool, body: Body): Promise<Es2Result> {
  const iccid = readIccid(body.iccid);
  if (iccid === undefined) return missing("iccid");
  if (iccid === null) return invalid("iccid");
  const final = body.finalProfileStatusIndicator;
  if (final === undefined) return missing("finalProfileStatusIndicator");
  if (final !== "Available" && final !== "Unavailable") return invalid("finalProfileStatusIndicator");
  return inTransaction(pool, async (client) => {
    const profile = await lockProfile(client, iccid);
    if (!profile) return unknownIccid(iccid);
    if (!CANCELLABLE.includes(profile.state)) return illegal(profile, "CancelOrder");
    if (body.matchingId !== undefined && body.matchingId !== profile.matching_id) {
      return failed(CODE.matchingIdMismatch, "matchingId is not this profile's");
    }
    const to: ProfileState = final === "Available" ? "AVAILABLE" : "UNAVAILABLE";
    const fields = final === "Available" ? { eid: null, matching_id: null } : {};
    return success({}, await moveProfile(client, profile, to, "cancelOrder", fields));
  });
}

export async function releaseProfile(pool: pg.Pool, body: Body): Promise<Es2Result> {
  const iccid = readIccid(body.iccid);
  if (iccid === undefined) return missing("iccid");
  if (iccid === null) return invalid("iccid");
  return inTransaction(pool, async (client) => {
    const profile = await lockProfile(client, iccid);
    if (!profile) return unknownIccid(iccid);
    if (profile.state !== "CONFIRMED") return illegal(profile, "ReleaseProfile");
    return success({}, await moveProfile(client, profile, "RELEASED", "releaseProfile"));
  });
}

function newMatchingId(): string {
  return randomBytes(10)
    .toString("hex")
    .toUpperCase()
    .replace(/(.{5})(?=.)/g, "$1-");
}
