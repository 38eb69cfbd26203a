// The human API reference at /docs, rendered on the server from the same OpenAPI document
// that /openapi.json serves. Plain HTML and inline CSS: nothing is fetched from other hosts.
import { ERROR_CODES } from "../shared/errors.ts";

type Json = Record<string, unknown>;

function escapeHtml(value: unknown): string {
  return String(value ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** Escaped prose, with `backticks` shown as code, as they are written in the OpenAPI descriptions. */
function prose(value: unknown): string {
  return escapeHtml(value).replace(/`([^`]+)`/g, "<code>$1</code>");
}

function schemaText(schema: unknown): string {
  return escapeHtml(JSON.stringify(schema, null, 2));
}

function renderOperation(path: string, method: string, op: Json): string {
  const responses = Object.entries((op.responses ?? {}) as Record<string, Json>)
    .map(
      ([status, response]) =>
        `<details><summary><code>${escapeHtml(status)}</code> ${prose(response.description)}</summary>` +
        `<pre>${schemaText((response.content as Json | undefined) ?? {})}</pre></details>`,
    )
    .join("");
  const params = ((op.parameters ?? []) as Json[])
    .map(
      (p) =>
        `<li><code>${escapeHtml(p.name)}</code> (${escapeHtml(p.in)}${p.required ? ", required" : ""}) ${escapeHtml(p.description)}</li>`,
    )
    .join("");
  const body = op.requestBody ? `<h4>Request body</h4><pre>${schemaText(op.requestBody)}</pre>` : "";
  const id = escapeHtml(op.operationId ?? `${method}-${path}`);
  return `<section id="${id}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${prose(op.summary)}</p>${op.description ? `<p>${prose(op.description)}</p>` : ""}
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ""}${body}<h4>Responses</h4>${responses}</section>`;
}

export function renderDocsPage(document: Json): string {
  const info = (document.info ?? {}) as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const toc = operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escapeHtml(op.operationId)}">${method.toUpperCase()} ${escapeHtml(path)}</a></li>`,
    )
    .join("");
  const errors = Object.entries(ERROR_CODES)
    .map(
      ([code, { status, title }]) =>
        `<tr id="${code}"><td><code>${code}</code></td><td>${status}</td><td>${escapeHtml(title)}</td></tr>`,
    )
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#1d2330}
pre{background:#f4f6f8;padding:.8em;overflow:auto;font-size:12px}code{font-family:ui-monospace,monospace}
.m{font-weight:700;padding:0 .4em;border-radius:3px;color:#fff}.get{background:#2f7d32}.post{background:#1f5fa8}.delete{background:#b3261e}
section{border-top:1px solid #dde2e8;padding-top:.5em}table{border-collapse:collapse}td{border:1px solid #dde2e8;padding:.2em .6em}</style>
</head><body><h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>${prose(info.description)}</p><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<h2>Authentication</h2><p>Send your API key as <code>Authorization: Bearer &lt;API_KEY&gt;</code> (or <code>X-API-Key</code>).
Sandbox keys start with <code>sand_</code>, production keys with <code>prod_</code>; each works only in its own environment
(<code>401 wrong_environment</code> otherwise). Operator routes take <code>Authorization: Bearer &lt;ADMIN_TOKEN&gt;</code>.</p>
<h2>Retries</h2><p>Every purchase is safe to retry: resubmit a cart with the same <code>cart_key</code>, and a top-up with the same
<code>Idempotency-Key</code> and body. You get the original outcome; nothing is charged or provisioned twice.
<code>409 request_in_progress</code> means the first attempt is still running: wait for <code>Retry-After</code> seconds.</p>
<h2>Operations</h2><ul>${toc}</ul>${operations.map(({ path, method, op }) => renderOperation(path, method, op)).join("")}
<h2 id="errors">Error codes</h2><p>Every error is <code>application/problem+json</code> with a stable <code>code</code>.</p>
<table><tr><th>code</th><th>status</th><th>meaning</th></tr>${errors}</table></body></html>`;
}
