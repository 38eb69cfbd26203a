// The operator suspends a partner in the operator console (issue 32), with headless Chromium
// against a real service process (its key cache told by NOTIFY, as in production): the partner's
// next API write is refused with 403 partner_suspended while its reads work, its people's console
// shows the operator's reason and refuses their forms, and reactivating restores writes.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Page } from "playwright-core";
import { browserForFile, DESKTOP } from "./support/browser.ts";
import { addPerson, signInPage } from "./support/people.ts";
import { call, createWorld, newPartner, waitFor } from "./support/world.ts";

const world = await createWorld();
const base = world.services[0]!.url;
const browser = await browserForFile();
const REASON = "Invoice 2026-10 unpaid; see ticket 4411";

const partner = await newPartner(base, 10_000, "Banner Travel");
const owner = await addPerson(world.database.pool, {
  realm: "partner",
  role: "owner",
  partner_id: partner.partner_id,
});
const operatorAdmin = await addPerson(world.database.pool, { realm: "operator", role: "admin" });

function createCart() {
  return call(base, "POST", "/v1/orders/cart", { key: partner.api_key, body: { package_id: "fr-1gb-7d" } });
}

async function signedIn(person: typeof owner): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signInPage(page, base, person);
  return page;
}

test("an operator admin suspends a partner with a reason: its API writes are refused, reads work, its console says why; reactivating restores writes", async () => {
  assert.equal((await createCart()).status, 201, "the key writes (and is cached) before");

  const admin = await signedIn(operatorAdmin);
  await admin.getByLabel("Name or partner id").fill("banner");
  await admin.getByRole("button", { name: "Search" }).click();
  await admin.getByRole("link", { name: "Banner Travel" }).click();
  await admin.getByLabel("Why (the partner's console shows it)").fill(REASON);
  await admin.getByRole("button", { name: "Suspend" }).click();
  await admin.getByText("The partner is suspended").waitFor();
  assert.equal(await admin.getByTestId("suspended-reason").textContent(), REASON);

  // The service process hears the suspension by NOTIFY within milliseconds; its next write is refused.
  const refused = await waitFor(
    "the write refused",
    async () => {
      const answer = await createCart();
      return answer.status === 403 ? answer : null;
    },
    5_000,
  );
  assert.equal(refused.body.code, "partner_suspended");
  const wallet = await call(base, "GET", "/v1/profile/wallet", { key: partner.api_key });
  assert.equal(wallet.status, 200, "reads still work");
  assert.equal(wallet.body.balance.amount_minor, 10_000);

  const team = await signedIn(owner);
  const banner = team.getByTestId("suspended-banner");
  assert.match((await banner.textContent()) ?? "", new RegExp(REASON));
  await team.getByRole("navigation").getByRole("link", { name: "API keys" }).click();
  assert.match((await team.getByTestId("suspended-banner").textContent()) ?? "", /suspended/);
  await team.getByRole("button", { name: "Issue a new key" }).click();
  await team.getByText("The operator suspended your account").waitFor();
  const keys = await world.database.pool.query(
    "select count(*)::int as n from api_keys where partner_id = $1",
    [partner.partner_id],
  );
  assert.equal(keys.rows[0].n, 1, "the console issued no key");

  await admin.getByLabel("Why (optional)").fill("Paid on 2026-11-27");
  await admin.getByRole("button", { name: "Reactivate" }).click();
  await admin.getByText("The partner is active again").waitFor();
  const restored = await waitFor(
    "writes restored",
    async () => {
      const answer = await createCart();
      return answer.status === 201 ? answer : null;
    },
    5_000,
  );
  assert.ok(restored.body.cart_key);
  await team.reload();
  assert.equal(await team.getByTestId("suspended-banner").count(), 0, "the banner is gone");
});
