// The prose of the OpenAPI document's description: what a partner reads first on /docs (Redoc
// shows its headings as sections of the menu), with the error codes table built from the closed
// set in src/shared/errors.ts so it cannot drift from what the API answers.
import { ERROR_CODES, FIELD_ERROR_CODES } from "../shared/errors.ts";

const INTRO =
  "Find data packages for 190+ destinations, reserve one in a cart, buy and provision an eSIM, top it up, " +
  "and list your orders. Every purchase is paid from your prepaid wallet and is safe to retry: " +
  "submit is idempotent by `cart_key`, submit-topup by the `Idempotency-Key` header.";

const SECTIONS = `# Authentication
Send your API key as \`Authorization: Bearer <API_KEY>\` (or \`X-API-Key\`). Sandbox keys start with \`sand_\`,
production keys with \`prod_\`; each works only in its own environment (\`401 wrong_environment\` otherwise).
Operator routes take \`Authorization: Bearer <ADMIN_TOKEN>\`.
Refused keys are counted per client address (300 a minute by default): past that a refused key is
\`429 rate_limited\` with \`Retry-After\`. A valid key is still admitted from such an address, unless a
flood of refused keys from addresses past their budget is being checked at that moment: then it is
\`429\` too, and admitted on a retry after \`Retry-After\`.

# Retries
Resubmit a cart with the same \`cart_key\`, and a top-up with the same \`Idempotency-Key\` and body: you get the
original outcome, and nothing is charged or provisioned twice; a replayed answer carries \`Idempotent-Replayed: true\`
(refunds, resends and the operator's credits and adjustments say it too). \`409 request_in_progress\` means the first attempt
is still running: wait \`Retry-After\` seconds. The TypeScript SDK (\`@esim-partner/sdk\`) does all of this by
itself; every operation below shows it beside curl.`;

function errorsTable(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, { status, title }]) => `| \`${code}\` | ${status} | ${title} |`,
  );
  return [
    "# Errors",
    "Every error is `application/problem+json` (RFC 9457) with a stable `code`; `detail` is for people. " +
      "A request body that does not match its schema, an unknown field included, is `400 invalid_request` " +
      "and does nothing; so is any body but `{}` or `null` sent to an operation that takes none (a refund, a secret " +
      "rotation, a test event, a delivery retry, a DELETE), and any query parameter an operation does not list " +
      "(`POST /v1/orders/{orderID}/refund?amount_minor=100`): `errors` names each unknown parameter.",
    "",
    "| code | status | meaning |",
    "| --- | --- | --- |",
    ...rows,
    "",
    "## Field errors",
    "A validation failure lists one `errors[]` entry per bad field, every bad field at once: `field` (as the " +
      "request names it), `message` (what it must be, in words, read after the field's name: `phone must be an " +
      "international number such as +14155550123`) and `code`, stable, one of:",
    "",
    "| code | meaning |",
    "| --- | --- |",
    ...Object.entries(FIELD_ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${meaning} |`),
  ].join("\n");
}

/** The document's `info.description`. */
export function apiDescription(): string {
  return `${INTRO}\n\n${SECTIONS}\n\n${errorsTable()}`;
}
