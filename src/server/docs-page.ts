// The human API reference at /docs: Redoc's standalone bundle, served from its npm package
// (`redoc`, bundles/redoc.standalone.js) by this service, rendering /openapi.json in the browser.
// Nothing comes from other hosts, so it works offline and under a strict CSP; the page's script
// is a file of its own so the CSP needs no 'unsafe-inline' for scripts.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/** Where the page's two scripts are served. */
export const DOCS_ASSETS = {
  redoc: "/docs/redoc.standalone.js",
  init: "/docs/init.js",
} as const;

/**
 * For /docs only. Redoc injects its styles (styled-components) and builds its search index in a
 * worker made from a blob: URL; it fetches the document from this origin. Everything else is refused.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function renderDocsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)} reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
</head>
<body>
<noscript><h1>${escapeHtml(title)}</h1><p>The reference needs JavaScript. The document itself: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<div id="redoc"></div>
<script src="${DOCS_ASSETS.redoc}"></script>
<script src="${DOCS_ASSETS.init}"></script>
</body>
</html>
`;
}

/** Redoc's options: https://redocly.com/docs/redoc/config (no fonts or links to other hosts). */
export const DOCS_INIT_SCRIPT = `Redoc.init("/openapi.json", {
  expandResponses: "200,201",
  jsonSampleExpandLevel: 3,
  hideDownloadButton: false,
  pathInMiddlePanel: true,
  sortPropsAlphabetically: false,
  theme: { typography: { fontFamily: "system-ui, sans-serif", headings: { fontFamily: "system-ui, sans-serif" }, code: { fontFamily: "ui-monospace, monospace" } } }
}, document.getElementById("redoc"));
`;

/** The bundle's bytes, read from the installed package. */
export function readRedocBundle(): Promise<Buffer> {
  const require = createRequire(import.meta.url);
  return readFile(require.resolve("redoc/bundles/redoc.standalone.js"));
}

function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}
