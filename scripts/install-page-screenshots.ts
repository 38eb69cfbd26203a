// `npm run install-page:screenshots`: the traveller's install page at a phone's width (390 px) in
// English, Spanish, Japanese and Arabic, as PNGs under docs/install-page/ (the README shows them),
// plus the same eSIM once installed and used (English). A throw-away sandbox, as
// console-screenshots.ts: its own embedded PostgreSQL, the service with its built-in carrier
// simulator, one partner that buys two eSIMs through the API. Japanese and Arabic need fonts with
// those glyphs (fonts-noto-cjk, fonts-noto-core: scripts/test-tools.sh installs them).
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { launchBrowser, PHONE } from "../test/support/browser.ts";
import { createPartner, purchase } from "../test/support/fixtures.ts";
import { expectStatus, request } from "../test/support/http.ts";
import { startOwnPostgres } from "../test/support/postgres.ts";
import { startServiceProcess } from "../test/support/service.ts";

const OUT = path.resolve("docs/install-page");
const ADMIN_TOKEN = "screenshots-admin-token-0123456789";

async function installPagePath(base: string, key: string, iccid: string): Promise<string> {
  const esim = await request(base, "GET", `/v1/esims/${iccid}`, { key });
  expectStatus(esim, 200, "esim");
  return new URL(esim.body.installation.install_page_url).pathname;
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  const postgres = await startOwnPostgres();
  const service = await startServiceProcess({ DATABASE_URL: postgres.url, ADMIN_TOKEN, LOG_LEVEL: "info" });
  const browser = await launchBrowser();
  try {
    const base = service.url;
    const partner = await createPartner(base, {
      admin_token: ADMIN_TOKEN,
      name: "Acme Travel",
      credit_minor: 50_000,
    });
    const key = partner.api_key;
    const fresh = await purchase(base, key, "jp-5gb-30d", { language: "en" }).catch(() =>
      purchase(base, key, "fr-1gb-7d", { language: "en" }),
    );
    const used = await purchase(base, key, "fr-3gb-15d", { language: "en" });
    for (const body of [{ event: "install" }, { event: "use_data", data_mb: 1_250 }]) {
      expectStatus(
        await request(base, "POST", `/v1/sandbox/esims/${used.esim_iccid}/simulate`, { key, body }),
        200,
        "simulate",
      );
    }
    const fresh_path = await installPagePath(base, key, fresh.esim_iccid);
    const used_path = await installPagePath(base, key, used.esim_iccid);
    const shots = [
      { name: "en", url: fresh_path },
      { name: "es", url: `${fresh_path}?lang=es` },
      { name: "ja", url: `${fresh_path}?lang=ja` },
      { name: "ar", url: `${fresh_path}?lang=ar` },
      { name: "en-installed", url: used_path },
    ];
    const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1 });
    for (const shot of shots) {
      const page = await context.newPage();
      await page.goto(`${base}${shot.url}`);
      await page.screenshot({ path: path.join(OUT, `${shot.name}.png`), fullPage: true });
      await page.close();
      console.log(`docs/install-page/${shot.name}.png`);
    }
  } finally {
    await browser.close();
    await service.stop();
    await postgres.stop();
  }
}

await main();
