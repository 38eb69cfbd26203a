// A partner's API keys as a table with a revoke button per active key, and the form that issues
// one (name, scope, allowed IPs: issue 31): the partner's own page and the operator's partner
// page show the same thing.
import { type KeyAccessInput, MAX_ALLOWED_IPS, MAX_KEY_NAME_LENGTH } from "../partners/key-access.ts";
import type { KeySummary } from "../partners/list-partners.ts";
import { formatInstant } from "./format.ts";
import { type Html, html } from "./html.ts";
import { csrfField, scrollTable } from "./layout.ts";
import type { Form } from "./request.ts";

export function keysTable(
  keys: readonly KeySummary[],
  revoke_action: (key_id: string) => string,
  csrf: string,
  current_key: string | null,
): Html {
  if (keys.length === 0) return html`<div class="panel"><p>No keys.</p></div>`;
  return scrollTable(
    "API keys",
    html`<table><thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Starts with</th>
      <th scope="col">Scope</th><th scope="col">Allowed IPs</th><th scope="col">Created</th>
      <th scope="col">Last used</th><th scope="col">State</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
      <tbody>${keys.map(
        (
          k,
        ) => html`<tr><td class="mono">${k.key_id}</td><td>${k.name}</td><td class="mono">${k.key_hint}…</td>
          <td>${k.scope === "read_only" ? "read only" : "full"}</td>
          <td class="mono">${k.allowed_ips.length === 0 ? html`<span class="hint">any</span>` : k.allowed_ips.join(", ")}</td>
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

/** The issue form: every field optional (no name, full scope, any address), as the API's body. */
export function issueKeyForm(action: string, csrf: string): Html {
  return html`<form method="post" action="${action}" class="panel">${csrfField(csrf)}
    <div class="fields">
      <div><label for="key_name">Name</label>
        <input id="key_name" name="name" maxlength="${MAX_KEY_NAME_LENGTH}" aria-describedby="key_name-hint">
        <p class="hint" id="key_name-hint">What the key is for, e.g. "Production servers".</p></div>
      <div><label for="key_scope">Scope</label>
        <select id="key_scope" name="scope"><option value="full" selected>Full: read and write</option>
          <option value="read_only">Read only: any write is refused</option></select></div>
      <div><label for="key_allowed_ips">Allowed IPs</label>
        <textarea id="key_allowed_ips" name="allowed_ips" rows="3" spellcheck="false" aria-describedby="key_allowed_ips-hint"></textarea>
        <p class="hint" id="key_allowed_ips-hint">CIDRs such as 203.0.113.0/24 or 2001:db8::/32, one per line
          (at most ${MAX_ALLOWED_IPS}). Empty: any address.</p></div>
      <div class="submit"><button type="submit">Issue a new key</button></div>
    </div></form>`;
}

/** The form's fields as the use case's options (checked there, as the API's body is). */
export function keyAccessFromForm(form: Form): KeyAccessInput {
  const allowed_ips = (form.allowed_ips ?? "")
    .split(/[\s,]+/)
    .filter((cidr) => cidr !== "")
    // One more than allowed, so the check says "too many" rather than the form truncating them.
    .slice(0, MAX_ALLOWED_IPS + 1);
  return {
    ...(form.name === undefined ? {} : { name: form.name }),
    ...(form.scope === undefined ? {} : { scope: form.scope }),
    allowed_ips,
  };
}
