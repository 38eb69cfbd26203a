// A partner's API keys as a table with a revoke button per active key: the partner's own page and
// the operator's partner page show the same thing.
import type { KeySummary } from "../partners/list-partners.ts";
import { formatInstant } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, scrollTable } from "./layout.ts";

export function keysTable(
  keys: readonly KeySummary[],
  revoke_action: (key_id: string) => string,
  csrf: string,
  current_key: string | null,
): Html {
  if (keys.length === 0) return html`<div class="panel"><p>No keys.</p></div>`;
  return scrollTable(
    "API keys",
    html`<table><thead><tr><th scope="col">Key</th><th scope="col">Starts with</th><th scope="col">Created</th>
      <th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
      <tbody>${keys.map(
        (k) => html`<tr><td class="mono">${k.key_id}</td><td class="mono">${k.key_hint}…</td>
          <td>${formatInstant(k.created_at)}</td><td>${formatInstant(k.last_used_at)}</td>
          <td>${k.revoked_at ? html`<span class="status failed">revoked</span>` : html`<span class="status active">active</span>`}${
            k.key_id === current_key ? html` <span class="hint">(this session)</span>` : ""
          }</td>
          <td>${
            k.revoked_at
              ? ""
              : html`<form method="post" action="${revoke_action(k.key_id)}" class="inline">${csrfField(csrf)}
            <button type="submit" class="danger" aria-label="Revoke ${k.key_id}">Revoke</button></form>`
          }</td></tr>`,
      )}</tbody></table>`,
  );
}

/** The page section that shows a key just issued: once, never again. */
export function issuedKey(api_key: string, key_id: string): Html {
  return html`<div class="notice ok" role="status">
    <p><strong>New key ${key_id}.</strong> Copy it now: it is shown once and only its hash is kept.</p>
    <p class="secret mono" aria-label="The new API key">${api_key}</p></div>`;
}
