// The top-up offer's one rule, two ways (src/topups/topup-offer.ts): the list a partner is shown
// and the check a submit makes for its one choice must agree on every package of the catalog.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createKysely } from "../src/db/pool.ts";
import type { Database } from "../src/db/schema.ts";
import { offeredTopUp, topUpOffer } from "../src/topups/topup-offer.ts";
import { createTestDatabase } from "./support/db.ts";

const database = await createTestDatabase({ catalog: true });
const db = createKysely<Database>(database.pool);

test("a submit accepts exactly the rows of the offer, for originals of every coverage, retired and unlimited ones too", async () => {
  await sql`insert into partners (partner_id, name) values ('ptr_offer', 'Offer Test')`.execute(db);
  const packages = (
    await sql<{ package_id: string; external_package_id: string; coverage: string; data_mb: number | null }>`
      select package_id, external_package_id, coverage, data_mb from packages order by package_id`.execute(db)
  ).rows;
  // One retired package: never offered, and still decides when it is an eSIM's original.
  const retired = packages.find((p) => p.coverage === "country" && p.data_mb !== null)!;
  await sql`update packages set active = false where package_id = ${retired.package_id}`.execute(db);
  const originals = [
    retired,
    ...["country", "regional", "global"].map((coverage) => packages.find((p) => p.coverage === coverage)!),
    packages.find((p) => p.data_mb === null)!,
  ];
  let offered_pairs = 0;
  for (const original of originals) {
    const esim = { package_id: original.package_id, supplier: "carrier" as const };
    const offer = await topUpOffer(db, "ptr_offer", esim);
    const listed = new Map(offer.map((row) => [row.package_id, row]));
    for (const candidate of packages) {
      const checked = await offeredTopUp(db, "ptr_offer", esim, candidate);
      assert.deepEqual(
        checked,
        listed.get(candidate.package_id) ?? null,
        `${original.package_id} <- ${candidate.package_id}`,
      );
      if (checked !== null) offered_pairs++;
      const other_id = { ...candidate, external_package_id: `${candidate.external_package_id}-x` };
      assert.equal(await offeredTopUp(db, "ptr_offer", esim, other_id), null);
    }
    assert.ok(!listed.has(retired.package_id), "a retired package is never offered");
  }
  assert.ok(offered_pairs >= originals.length, "every metered original is offered something");
  // An original with no destinations (here: no such package) covers nothing: nothing is offered.
  const nothing = { package_id: "no-such-package", supplier: "carrier" as const };
  assert.deepEqual(await topUpOffer(db, "ptr_offer", nothing), []);
  for (const candidate of packages) {
    assert.equal(await offeredTopUp(db, "ptr_offer", nothing, candidate), null);
  }
});
