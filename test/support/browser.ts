// Headless Chromium (Debian's `chromium`, installed by scripts/test-tools.sh) driven by
// playwright-core, for the web console's tests and screenshots. No network but the service: every
// other host resolves nowhere, so a page that needed a CDN would fail here. axe-core is evaluated
// in the page through the DevTools protocol, so the page's own CSP (no script at all) stays on.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

/**
 * No network but the service: every name resolves nowhere but 127.0.0.1, and `localhost` too with
 * `localhost: true` (WebAuthn refuses an IP address as the site's name).
 */
export async function launchBrowser(options: { localhost?: boolean } = {}): Promise<Browser> {
  const except = options.localhost ? "EXCLUDE 127.0.0.1, EXCLUDE localhost" : "EXCLUDE 127.0.0.1";
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      `--host-resolver-rules=MAP * ~NOTFOUND, ${except}`,
    ],
  });
  return browser;
}

/** One browser per test file, closed after it. */
export async function browserForFile(options: { localhost?: boolean } = {}): Promise<Browser> {
  const browser = await launchBrowser(options);
  after(() => browser.close());
  return browser;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export type AxeViolation = {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
};

/** axe-core's WCAG 2.x A and AA rules on the page as it is; the violations that are serious or critical. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const options = JSON.stringify({
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
  });
  const violations = (await page.evaluate(
    `axe.run(document, ${options}).then((result) => result.violations)`,
  )) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
