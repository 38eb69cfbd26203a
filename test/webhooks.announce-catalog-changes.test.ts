// Catalog changes announced as package.* events to any number of subscribed partners (review of
// issue 34): the subscriptions are read by pages of partners, so more partners than one page (or
// than the old single read's bound of 30,000 partner x type rows) all get their events. Real
// PostgreSQL; the announcing function of the webhook loop, called in-process.
import assert from "node:assert/strict";
import { test } from "node:test";
import { recordCatalogChanges } from "../src/catalog/record-catalog-changes.ts";
import { announceCatalogChanges } from "../src/webhooks/announce-catalog-changes.ts";
import { createTestApp } from "./support/app.ts";

const api = await createTestApp();
const pool = api.database.pool;
/** 10,001 partners x 3 package types: past the 30,000 rows the subscriptions were once read in. */
const PARTNERS = 10_001;

async function announceAll(subscriptions_page?: number): Promise<void> {
  for (let rounds = 0; ; rounds++) {
    assert.ok(rounds < 10_000, "the announcing ends");
    const options = subscriptions_page === undefined ? {} : { subscriptions_page };
    if (!(await announceCatalogChanges(api.ctx, options)).more) return;
  }
}

async function partnersTold(change_package: string, kind: string): Promise<number> {
  const { rows } = await pool.query(
    `select count(distinct partner_id)::int as n from events
     where type = $1 and data->>'package_id' = $2 and partner_id like 'ptr_many_%'`,
    [`package.${kind}`, change_package],
  );
  return rows[0].n;
}

test("every subscribed partner gets the package events, read by pages of partners, however many there are", async () => {
  // The seed's own changes are announced first, before any endpoint exists.
  await announceAll();
  await pool.query(
    `insert into partners (partner_id, name)
     select 'ptr_many_' || lpad(i::text, 5, '0'), 'Many ' || i from generate_series(1, $1::int) i`,
    [PARTNERS],
  );
  await pool.query(
    `insert into webhook_endpoints (endpoint_id, partner_id, url, event_types, status, secret_sealed)
     select 'we_many_' || lpad(i::text, 5, '0'), 'ptr_many_' || lpad(i::text, 5, '0'),
            'https://hooks.example.com/' || i, '{}', 'enabled', 'sealed'
     from generate_series(1, $1::int) i`,
    [PARTNERS],
  );
  await recordCatalogChanges(pool, { added: [], updated: ["fr-1gb-7d"], removed: [] });
  // Pages of 999 partners: 11 pages a round, none missed at a page's edge, none told twice.
  await announceAll(999);
  assert.equal(await partnersTold("fr-1gb-7d", "updated"), PARTNERS);
  const { rows } = await pool.query(
    "select count(*)::int as n from events where type = 'package.updated' and partner_id like 'ptr_many_%'",
  );
  assert.equal(rows[0].n, PARTNERS);
});
