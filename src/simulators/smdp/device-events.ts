// Sandbox control: what a device and its LPA do with a released profile, so the SM-DP+ reports it
// as a real one would (HandleDownloadProgressInfo, notification points 1 eligibility,
// 2 confirmation, 3 BPP download, 4 installation, 5 deletion). Failures at eligibility or
// confirmation leave the profile RELEASED and are reported as Failed at their point.
import type pg from "pg";
import { inTransaction } from "../../db/pool.ts";
import { ES2PLUS_CODES as CODE, type Es2Code } from "../../protocols/es2plus.ts";
import { lockProfile, moveProfile, type ProfileState, type SmdpProfile } from "./profiles.sql.ts";

export type DeviceEvent = "download" | "install" | "delete" | "fail_eligibility" | "fail_confirmation";
export const DEVICE_EVENTS: readonly DeviceEvent[] = [
  "download",
  "install",
  "delete",
  "fail_eligibility",
  "fail_confirmation",
];

export type Notification = {
  point: 1 | 2 | 3 | 4 | 5;
  status: "Executed-Success" | "Failed";
  code?: { subjectCode: string; reasonCode: string; message: string };
};

export type DeviceOutcome =
  | { kind: "not_found" }
  | { kind: "illegal"; state: ProfileState }
  | { kind: "done"; profile: SmdpProfile; notifications: Notification[] };

const OK = "Executed-Success" as const;
const DOWNLOAD: Notification[] = [
  { point: 1, status: OK },
  { point: 2, status: OK },
  { point: 3, status: OK },
];

export async function deviceEvent(pool: pg.Pool, iccid: string, event: DeviceEvent): Promise<DeviceOutcome> {
  return inTransaction(pool, async (client) => {
    let profile = await lockProfile(client, iccid);
    if (!profile) return { kind: "not_found" } as const;
    const illegal = { kind: "illegal", state: profile.state } as const;
    const notifications: Notification[] = [];
    if (event === "fail_eligibility" || event === "fail_confirmation") {
      if (profile.state !== "RELEASED") return illegal;
      notifications.push(failure(event));
      return { kind: "done", profile, notifications } as const;
    }
    if (event === "delete") {
      if (profile.state !== "INSTALLED" && profile.state !== "DOWNLOADED") return illegal;
      profile = await moveProfile(client, profile, "DELETED", "device:delete");
      return { kind: "done", profile, notifications: [{ point: 5, status: OK }] } as const;
    }
    if (profile.state === "RELEASED") {
      profile = await moveProfile(client, profile, "DOWNLOADED", "device:download");
      notifications.push(...DOWNLOAD);
    } else if (event === "download" || profile.state !== "DOWNLOADED") {
      return illegal;
    }
    if (event === "install") {
      profile = await moveProfile(client, profile, "INSTALLED", "device:install");
      notifications.push({ point: 4, status: OK });
    }
    return { kind: "done", profile, notifications } as const;
  });
}

function failure(event: "fail_eligibility" | "fail_confirmation"): Notification {
  return event === "fail_eligibility"
    ? {
        point: 1,
        status: "Failed",
        code: { ...codeOf(CODE.notEligible), message: "device not eligible" },
      }
    : {
        point: 2,
        status: "Failed",
        code: { ...codeOf(CODE.confirmationRefused), message: "confirmation code refused" },
      };
}

const codeOf = (code: Es2Code) => ({ subjectCode: code.subjectCode, reasonCode: code.reasonCode });
