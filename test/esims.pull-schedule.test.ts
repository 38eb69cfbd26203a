// When the pull sync next asks the carrier about an eSIM (src/esims/pull-schedule.ts): never for
// the eSIMs that cannot change on their own, less often as a released eSIM ages, and never past
// the instants that time alone makes facts of (the expiry warning 24 hours before, the expiry).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { EsimStatus } from "../src/db/schema.ts";
import {
  LINE_MARGIN_MS,
  MAX_RELEASED_INTERVAL_S,
  nextPull,
  pullAt,
  RELEASED_AGE_SHARE,
} from "../src/esims/pull-schedule.ts";

const NOW = new Date("2026-11-23T12:00:00Z");
const HOUR_MS = 3_600_000;
const MIN_INTERVAL_S = 900;
const hoursFromNow = (hours: number) => new Date(NOW.getTime() + hours * HOUR_MS);
const esim = (status: EsimStatus, overrides: { created_at?: Date; expires_at?: Date | null } = {}) => ({
  status,
  created_at: overrides.created_at ?? hoursFromNow(-1),
  expires_at: overrides.expires_at ?? null,
});
const inS = (date: Date) => (date.getTime() - NOW.getTime()) / 1000;

test("expired, deleted and cancelled eSIMs are not pulled again, whatever their expiry", () => {
  for (const status of ["expired", "deleted", "cancelled"] as const) {
    assert.equal(
      nextPull(esim(status, { expires_at: hoursFromNow(30) }), NOW, MIN_INTERVAL_S, 1),
      null,
      status,
    );
  }
});

test("installed, active and depleted eSIMs are pulled the minimum interval apart, times the jitter", () => {
  for (const status of ["installed", "active", "depleted"] as const) {
    const schedule = nextPull(
      esim(status, { created_at: hoursFromNow(-24 * 30) }),
      NOW,
      MIN_INTERVAL_S,
      1.125,
    );
    assert.ok(schedule);
    assert.equal(inS(pullAt(schedule)), MIN_INTERVAL_S * 1.125, status);
    assert.equal(schedule.line_at, null);
  }
});

test("a released eSIM is pulled a tenth of its age apart: the minimum while young, at most a day when old", () => {
  const interval_s = (age_hours: number) =>
    inS(
      pullAt(nextPull(esim("released", { created_at: hoursFromNow(-age_hours) }), NOW, MIN_INTERVAL_S, 1)!),
    );
  assert.equal(interval_s(0), MIN_INTERVAL_S, "just sold");
  assert.equal(interval_s(1), MIN_INTERVAL_S, "an hour old: a tenth is 6 minutes, below the minimum");
  assert.equal(interval_s(24), 24 * 3600 * RELEASED_AGE_SHARE, "a day old: every 2.4 hours");
  assert.equal(interval_s(24 * 30), MAX_RELEASED_INTERVAL_S, "a month old: daily");
  assert.ok(interval_s(48) > interval_s(24), "older is pulled less often");
  // A minimum above a day still holds.
  const slow = nextPull(esim("released", { created_at: hoursFromNow(-24 * 365) }), NOW, 2 * 86_400, 1)!;
  assert.equal(inS(pullAt(slow)), 2 * 86_400);
});

test("the next pull is no later than the expiry warning's line, then the expiry, each a margin after it", () => {
  const margin_s = LINE_MARGIN_MS / 1000;
  // 30 hours left: the warning line (24 hours before) is 6 hours away, past a 15-minute interval.
  const far = nextPull(esim("active", { expires_at: hoursFromNow(30) }), NOW, MIN_INTERVAL_S, 1)!;
  assert.equal(inS(far.line_at!), 6 * 3600 + margin_s);
  assert.equal(inS(pullAt(far)), MIN_INTERVAL_S, "the interval comes first");
  // With a long interval the line decides.
  const long = nextPull(esim("active", { expires_at: hoursFromNow(30) }), NOW, 86_400, 1)!;
  assert.equal(inS(pullAt(long)), 6 * 3600 + margin_s, "at the warning's line, not a day later");
  // Inside the last 24 hours the next line is the expiry itself.
  const near = nextPull(esim("active", { expires_at: hoursFromNow(10) }), NOW, 86_400, 1)!;
  assert.equal(inS(pullAt(near)), 10 * 3600 + margin_s);
  // A released eSIM with a fixed start date, and a depleted one, still hear of their expiry.
  const released = nextPull(
    esim("released", { created_at: hoursFromNow(-24 * 40), expires_at: hoursFromNow(2) }),
    NOW,
    900,
    1,
  )!;
  assert.equal(inS(pullAt(released)), 2 * 3600 + margin_s);
  const depleted = nextPull(esim("depleted", { expires_at: hoursFromNow(3) }), NOW, 86_400, 1)!;
  assert.equal(inS(pullAt(depleted)), 3 * 3600 + margin_s);
  // Past the expiry there is no line left: no pull sooner than the interval (no loop of early pulls).
  const past = nextPull(esim("active", { expires_at: hoursFromNow(-0.001) }), NOW, 86_400, 1)!;
  assert.equal(past.line_at, null);
  assert.equal(inS(pullAt(past)), 86_400);
  // Exactly on the warning's line (this pull records the warning): the next line is the expiry.
  const on = nextPull(esim("active", { expires_at: hoursFromNow(24) }), NOW, 86_400 * 2, 1)!;
  assert.equal(inS(on.line_at!), 24 * 3600 + margin_s);
});
