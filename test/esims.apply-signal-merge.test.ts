// The merge of carrier signals into the stored eSIM (src/esims/apply-signal-merge.ts): every order
// of the same signals ends in the same state, nothing moves backwards but a top-up's revival, and
// the time-driven expiry warning is noticed once the last bundle ends within 24 hours.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CarrierBundle, EsimSignal } from "../src/carrier/carrier.ts";
import { mergeSignal, type StoredBundle, type StoredEsim } from "../src/esims/apply-signal-merge.ts";
import { eventEsim, MAX_EVENT_BUNDLES } from "../src/esims/event-esim.ts";
import { nextPull } from "../src/esims/pull-schedule.ts";
import { renderEsim } from "../src/esims/render-esim.ts";

const ICCID = "8901260000000000014";
const T0 = Date.parse("2026-11-01T00:00:00Z");
const at = (hours: number) => new Date(T0 + hours * 3_600_000).toISOString();

const FRESH: StoredEsim = {
  iccid: ICCID,
  status: "released",
  installed_at: null,
  activated_at: null,
  expires_at: null,
  deleted_at: null,
  usage_updated_at: null,
};
const bundle = (order_id: string, data_mb: number | null = 1000): StoredBundle => ({
  order_id,
  reference: order_id,
  status: "queued",
  data_mb,
  data_used_mb: 0,
  activated_at: null,
  expires_at: null,
});

function signal(
  hours: number,
  bundles: CarrierBundle[],
  profile: Partial<EsimSignal["profile"]> = {},
): EsimSignal {
  return {
    iccid: ICCID,
    as_of: at(hours),
    profile: { state: "installed", installed_at: at(1), deleted_at: null, ...profile },
    bundles,
  };
}
const running = (
  reference: string,
  used: number,
  status: CarrierBundle["status"] = "active",
): CarrierBundle => ({
  reference,
  status,
  data_mb: 1000,
  data_used_mb: used,
  activated_at: at(2),
  expires_at: at(2 + 7 * 24),
});

/** Applies the signals one after the other, as the database would keep them. */
function applyAll(signals: EsimSignal[], stored = [bundle("ord_a")], now = new Date(at(10))) {
  let esim = FRESH;
  let bundles = stored;
  const facts: string[] = [];
  for (const next of signals) {
    const merged = mergeSignal(esim, bundles, next, now);
    esim = merged.esim;
    bundles = merged.bundles;
    facts.push(...merged.facts.map((fact) => fact.dedup_key));
  }
  return { esim, bundles, facts };
}

const SEQUENCE = [
  signal(1, [{ ...running("ord_a", 0), status: "queued", activated_at: null, expires_at: null }]),
  signal(3, [running("ord_a", 400)]),
  signal(4, [running("ord_a", 850)]),
  signal(5, [running("ord_a", 1000, "depleted")]),
];

test("every order of the same signals, repeated or not, ends in the same state with each fact once", () => {
  const inOrder = applyAll(SEQUENCE);
  assert.equal(inOrder.esim.status, "depleted");
  const orders = [
    [3, 0, 2, 1],
    [1, 3, 3, 0, 2, 1, 0],
    [2, 2, 1, 0, 3],
  ];
  for (const order of orders) {
    const scrambled = applyAll(order.map((index) => SEQUENCE[index]!));
    assert.deepEqual(scrambled.esim, inOrder.esim, `order ${order}`);
    assert.deepEqual(scrambled.bundles, inOrder.bundles, `order ${order}`);
    assert.deepEqual(new Set(scrambled.facts), new Set(inOrder.facts), `order ${order}: the same facts`);
  }
  assert.deepEqual(
    [...new Set(inOrder.facts)].sort(),
    [
      "activated:" + ICCID,
      "installed:" + ICCID,
      "usage:ord_a:100",
      "usage:ord_a:50",
      "usage:ord_a:80",
    ].sort(),
  );
});

test("a late signal moves nothing back; a top-up's new bundle revives a depleted eSIM", () => {
  const depleted = applyAll(SEQUENCE);
  const late = mergeSignal(depleted.esim, depleted.bundles, SEQUENCE[1]!, new Date(at(10)));
  assert.equal(late.esim_changed, false);
  assert.deepEqual(late.changed_bundles, []);

  const withTopUp = [...depleted.bundles, bundle("ord_b", 3000)];
  const revived = mergeSignal(
    depleted.esim,
    withTopUp,
    signal(6, [running("ord_a", 1000, "depleted"), { ...running("ord_b", 0), activated_at: at(6) }]),
    new Date(at(10)),
  );
  assert.equal(revived.esim.status, "active");
  assert.deepEqual(
    revived.bundles.map((b) => b.status),
    ["depleted", "active"],
  );
});

test("an eSIM whose plan expired before it was ever installed is released again by a top-up, and pulled", () => {
  const never = { state: "released" as const, installed_at: null };
  const lapsed = { ...running("ord_a", 0, "expired"), activated_at: null, expires_at: at(24) };
  const expired = applyAll([signal(30, [lapsed], never)]);
  assert.equal(expired.esim.status, "expired");
  assert.equal(expired.esim.installed_at, null);
  const topped = [...expired.bundles, bundle("ord_b", 3000)];
  const queued = { ...running("ord_b", 0, "queued"), activated_at: null, expires_at: null };
  const revived = mergeSignal(expired.esim, topped, signal(40, [lapsed, queued], never), new Date(at(40)));
  assert.equal(revived.esim.status, "released", "ready to install again, not expired");
  assert.equal(revived.esim_changed, true);
  assert.notEqual(nextPull({ ...revived.esim, created_at: new Date(T0) }, new Date(at(40)), 60, 1), null);
  // A late signal from before the top-up moves nothing back.
  const late = mergeSignal(revived.esim, revived.bundles, signal(30, [lapsed], never), new Date(at(41)));
  assert.equal(late.esim.status, "released");
});

test("the expiry warning is noticed within 24 hours of the end, once per bundle; expired and deleted follow", () => {
  const active = applyAll(SEQUENCE.slice(0, 2));
  const ends_at_hours = 2 + 7 * 24;
  const early = mergeSignal(
    active.esim,
    active.bundles,
    signal(20, [running("ord_a", 400)]),
    new Date(at(20)),
  );
  assert.ok(!early.facts.some((fact) => fact.type === "esim.expiring"), "a week before: nothing");
  const soon = new Date(at(ends_at_hours - 5));
  const warned = mergeSignal(
    active.esim,
    active.bundles,
    signal(ends_at_hours - 5, [running("ord_a", 400)]),
    soon,
  );
  assert.deepEqual(
    warned.facts.map((fact) => fact.dedup_key),
    ["expiring:ord_a"],
  );

  const ended = mergeSignal(
    warned.esim,
    warned.bundles,
    signal(ends_at_hours, [running("ord_a", 400, "expired")]),
    new Date(at(ends_at_hours)),
  );
  assert.equal(ended.esim.status, "expired");
  assert.ok(ended.facts.some((fact) => fact.dedup_key === "expired:ord_a"));
  const gone = mergeSignal(
    ended.esim,
    ended.bundles,
    signal(ends_at_hours + 1, [running("ord_a", 400, "expired")], {
      state: "deleted",
      deleted_at: at(ends_at_hours + 1),
    }),
    new Date(at(ends_at_hours + 1)),
  );
  assert.equal(gone.esim.status, "deleted");
  const after = mergeSignal(gone.esim, gone.bundles, SEQUENCE[1]!, new Date(at(ends_at_hours + 2)));
  assert.equal(after.esim.status, "deleted", "deleted is final");
});

test("an eSIM with 160 bundles still fits an event's 32 KiB data bound (applying its signal would throw)", () => {
  const bundles = Array.from({ length: 160 }, (_, i) => ({
    order_id: `ord_01JDZ6Q0S6Y2N8V1ABCDEFG${String(i).padStart(3, "0")}`,
    package_id: "fr-3gb-15d",
    name: "France 3 GB 15 days",
    data_mb: 3072,
    data_used_mb: 0,
    validity_days: 15,
    status: "queued" as const,
    activated_at: null,
    expires_at: null,
  }));
  const esim = renderEsim(
    {
      iccid: ICCID,
      order_id: "ord_x",
      client_reference: null,
      created_at: new Date(T0),
      status: "active",
      installed_at: null,
      activated_at: null,
      expires_at: null,
      usage_updated_at: null,
      smdp_address: "smdp.example.com",
      activation_code: "ABCD-1234",
      install_token: "a".repeat(64),
    },
    bundles,
    "https://esim.example",
  );
  assert.ok(JSON.stringify(esim).length > 32 * 1024, "the full rendering is over the bound");
  const data = eventEsim(esim);
  assert.ok(JSON.stringify(data).length <= 32 * 1024, `${JSON.stringify(data).length} bytes`);
  assert.equal(data.bundles.length, MAX_EVENT_BUNDLES);
  assert.equal(data.bundles_truncated, true);
  assert.equal(data.bundles.at(-1)?.order_id, bundles.at(-1)?.order_id, "the newest bundles are kept");
  assert.equal(eventEsim({ ...esim, bundles: esim.bundles.slice(0, 3) }).bundles_truncated, undefined);
});

test("a profile reported installed without a time moves the eSIM to installed (not released forever)", () => {
  const merged = mergeSignal(
    FRESH,
    [bundle("ord_a")],
    signal(3, [], { installed_at: null }),
    new Date(at(3)),
  );
  assert.equal(merged.esim.status, "installed");
  assert.equal(merged.esim.installed_at?.toISOString(), at(3));
  assert.deepEqual(
    merged.facts.map((fact) => fact.type),
    ["esim.installed"],
  );
});

test("data used before the SM-DP+ reports the download: the eSIM is active, never activated while released", () => {
  const early = signal(3, [running("ord_a", 600)], { state: "released", installed_at: null });
  const merged = mergeSignal(FRESH, [bundle("ord_a")], early, new Date(at(3)));
  assert.equal(merged.esim.status, "active");
  assert.equal(merged.esim.installed_at?.toISOString(), at(2), "installed no later than activated");
  const types = merged.facts.map((fact) => fact.type);
  assert.ok(types.includes("esim.installed") && types.includes("esim.activated"), types.join(","));
  // The SM-DP+'s later report with its own, later time changes nothing (earliest wins).
  const later = mergeSignal(
    merged.esim,
    merged.bundles,
    signal(4, [running("ord_a", 600)], { installed_at: at(3) }),
    new Date(at(4)),
  );
  assert.equal(later.esim.installed_at?.toISOString(), at(2));
  assert.deepEqual(later.facts, []);
});
