// `x-codeSamples` (the Redoc extension) for every operation of the served OpenAPI document: the
// same call with the TypeScript SDK (packages/sdk) and with curl. Added once, when the document
// is built (@fastify/swagger's transformObject), so /openapi.json, docs/openapi.json and /docs agree.

type Json = Record<string, unknown>;
type CodeSample = { lang: string; label: string; source: string };

/** The example values every sample shares (the README's walk-through uses the same). */
const EXAMPLE = {
  cart_key: "cart_8mQ2kV7xYp3LwN1sRt6uZa",
  order_id: "ord_5hT9bC2nWq8JkL4mXv1yRe",
  iccid: "8944500102198304826",
  partner_id: "ptr_3nF6hJ8kLm2QpR5sTv9wXy",
  key_id: "key_7dG1jK4mNp6RsT8vWx2yZb",
};
/** The webhook examples (the path parameters and the SDK samples below share them). */
const WEBHOOK = {
  url: "https://partner.example/webhooks/esim",
  endpoint_id: "whe_2pK7mQ9rTs4VxY1zBc6DfG",
  delivery_id: "dlv_6tH3jL8nPq1RsV5wXz9AbC",
  event_id: "evt_4bN8qS2uWy6ZaC1dEf5GhJ",
};
/** A path parameter's example by its name, for operations without their own (new routes too). */
const PATH_EXAMPLES: Record<string, string> = {
  ...EXAMPLE,
  orderID: EXAMPLE.order_id,
  destination_code: "FR",
  endpoint_id: WEBHOOK.endpoint_id,
  delivery_id: WEBHOOK.delivery_id,
  event_id: WEBHOOK.event_id,
  month: "2026-11",
};
const END_USER = { email: "ana@example.com", phone: "+14155550123", first_name: "Ana", last_name: "Lima" };

/** Per operation: the SDK call (partner routes), the example path values, query and body. */
const SAMPLES: Record<string, { sdk?: string; path?: Json; query?: string; body?: Json; headers?: Json }> = {
  listDestinationPackages: {
    path: { destination_code: "FR" },
    sdk: 'const { data } = await client.catalog.packages("FR");',
  },
  listCatalogChanges: {
    query: "since=Y3MxOjEyMzQ&limit=100",
    sdk: "let savedCursor: string | undefined; // yours to keep between polls\nconst feed = client.catalog.changes({ since: savedCursor });\nfor await (const change of feed) {\n  console.log(change.kind, change.package_id, change.package?.wholesale_price);\n}\nsavedCursor = feed.cursor; // poll from here next time",
  },
  createCart: {
    body: { package_id: "fr-1gb-7d" },
    sdk: 'const cart = await client.carts.create({ package_id: "fr-1gb-7d" });',
  },
  submitOrder: {
    body: { cart_key: EXAMPLE.cart_key, ...END_USER, client_reference: "booking-1042" },
    sdk:
      "// Retried by the SDK on network errors: safe by cart_key, charged once.\n" +
      "const order = await client.orders.submit({\n  cart_key: cart.cart_key,\n" +
      '  email: "ana@example.com",\n  phone: "+14155550123",\n  first_name: "Ana",\n  last_name: "Lima",\n' +
      '  client_reference: "booking-1042",\n});',
  },
  getOrder: {
    path: { orderID: EXAMPLE.order_id },
    sdk: `const order = await client.orders.get("${EXAMPLE.order_id}");`,
  },
  refundOrder: {
    path: { orderID: EXAMPLE.order_id },
    headers: { "Idempotency-Key": "refund-booking-1042" },
    sdk: `const refunded = await client.orders.refund("${EXAMPLE.order_id}"); // status "refunded"`,
  },
  resendOrderEmail: {
    path: { orderID: EXAMPLE.order_id },
    headers: { "Idempotency-Key": "resend-ticket-4711" },
    body: { email: "ana.lima@work.example" },
    sdk: `const { email_id } = await client.orders.resendEmail("${EXAMPLE.order_id}", { email: "ana.lima@work.example" });`,
  },
  listOrderEmails: {
    path: { orderID: EXAMPLE.order_id },
    sdk: `const { data } = await client.orders.emails("${EXAMPLE.order_id}"); // status: queued | sent | failed`,
  },
  listOrderEvents: {
    path: { orderID: EXAMPLE.order_id },
    sdk: `const { data } = await client.orders.events("${EXAMPLE.order_id}"); // oldest first`,
  },
  listOrders: {
    query: "q=ANA%40example.com&status=completed&from=2026-11-01&to=2026-11-30&limit=20",
    sdk:
      "// A traveller's orders: q is an order id, an ICCID, an email (whole, any case) or the start of a\n" +
      "// client reference or last name (any case).\n" +
      'for await (const order of client.orders.list({ q: "ANA@example.com", status: "completed", from: "2026-11-01" })) {\n' +
      "  console.log(order.orderID, order.status);\n}",
  },
  listAvailableTopUps: {
    path: { iccid: EXAMPLE.iccid },
    sdk: `const { data } = await client.topUps.available("${EXAMPLE.iccid}");`,
  },
  submitTopUp: {
    headers: { "Idempotency-Key": "topup-booking-1042" },
    body: {
      iccid: EXAMPLE.iccid,
      package_id: "fr-3gb-15d",
      external_package_id: "CARRIER-FR-3GB-15D",
      ...END_USER,
    },
    sdk:
      "const topUp = await client.topUps.submit(\n" +
      `  { iccid: "${EXAMPLE.iccid}", package_id: "fr-3gb-15d", external_package_id: "CARRIER-FR-3GB-15D",\n` +
      '    email: "ana@example.com", phone: "+14155550123", first_name: "Ana", last_name: "Lima" },\n' +
      '  { idempotencyKey: "topup-booking-1042" }, // optional: the SDK makes one per call\n);',
  },
  getWallet: { sdk: "const { balance } = await client.wallet.get();" },
  listWalletTransactions: {
    query: "from=2026-11-01&to=2026-11-30&limit=50",
    sdk:
      'for await (const row of client.wallet.transactions({ from: "2026-11-01", to: "2026-11-30" })) {\n' +
      "  console.log(row.created_at, row.type, row.amount.amount_minor, row.balance_after.amount_minor);\n}\n" +
      '// Or every row of the range as CSV text (Accept: text/csv):\nconst csv = await client.wallet.transactionsCsv({ from: "2026-11-01", to: "2026-11-30" });',
  },
  setLowBalanceAlert: {
    body: { threshold_minor: 50000 },
    sdk: "const wallet = await client.wallet.setLowBalanceAlert({ threshold_minor: 50000 }); // null: off",
  },
  listEsims: {
    query: "status=active&q=lima&limit=20",
    sdk:
      'for await (const esim of client.esims.list({ status: "active", q: "lima" })) {\n' +
      "  console.log(esim.iccid, esim.usage.data_remaining_mb, esim.usage.updated_at);\n}",
  },
  getEsim: {
    path: { iccid: EXAMPLE.iccid },
    sdk: `const esim = await client.esims.get("${EXAMPLE.iccid}");\nconsole.log(esim.status, esim.installation.ios_install_url);`,
  },
  getEsimQrPng: {
    path: { iccid: EXAMPLE.iccid },
    query: "size=512",
    sdk: `const png: Uint8Array = await client.esims.qrPng("${EXAMPLE.iccid}", { size: 512 });`,
  },
  simulateEsimEvent: {
    path: { iccid: EXAMPLE.iccid },
    body: { event: "use_data", data_mb: 600 },
    sdk:
      "// Sandbox only; never retried by the SDK (a repeated use_data would use the data twice).\n" +
      `const esim = await client.esims.simulate("${EXAMPLE.iccid}", { event: "use_data", data_mb: 600 });`,
  },
  createWebhookEndpoint: {
    body: { url: WEBHOOK.url, description: "orders", event_types: ["order.completed", "order.failed"] },
    sdk:
      "// Not retried after a lost answer (a retry would add a second endpoint): check list() first.\n" +
      "const endpoint = await client.webhookEndpoints.create({\n" +
      `  url: "${WEBHOOK.url}",\n  description: "orders",\n` +
      '  event_types: ["order.completed", "order.failed"],\n});\n' +
      "// Shown this once: store it where your receiver reads it.\nconsole.log(endpoint.endpoint_id, endpoint.secret);",
  },
  listWebhookEndpoints: {
    sdk: "for await (const endpoint of client.webhookEndpoints.list()) {\n  console.log(endpoint.endpoint_id, endpoint.url, endpoint.status);\n}",
  },
  getWebhookEndpoint: {
    sdk: `const endpoint = await client.webhookEndpoints.get("${WEBHOOK.endpoint_id}");\nconsole.log(endpoint.status, endpoint.disabled_reason);`,
  },
  updateWebhookEndpoint: {
    body: { status: "enabled" },
    sdk:
      "// Fields left out stay; `enabled` sends the deliveries that waited while it was disabled.\n" +
      `const endpoint = await client.webhookEndpoints.update("${WEBHOOK.endpoint_id}", { status: "enabled" });`,
  },
  deleteWebhookEndpoint: {
    sdk: `await client.webhookEndpoints.delete("${WEBHOOK.endpoint_id}");`,
  },
  rotateWebhookSecret: {
    sdk:
      "// Never retried after a lost answer: the lost secret, which nobody saw, would sign for 24 hours.\n" +
      `const { secret } = await client.webhookEndpoints.rotateSecret("${WEBHOOK.endpoint_id}");\n` +
      "// For 24 hours deliveries carry the previous secret's signature too:\n" +
      "// verify with either while you deploy the new one.",
  },
  sendWebhookTestEvent: {
    sdk: `const { event_id } = await client.webhookEndpoints.test("${WEBHOOK.endpoint_id}");`,
  },
  listWebhookDeliveries: {
    query: "status=failed&limit=20",
    sdk:
      `for await (const delivery of client.webhookEndpoints.deliveries("${WEBHOOK.endpoint_id}", { status: "failed" })) {\n` +
      "  console.log(delivery.event_id, delivery.attempts, delivery.last_response_status, delivery.last_error);\n}",
  },
  retryWebhookDelivery: {
    sdk: `const delivery = await client.webhookEndpoints.retryDelivery("${WEBHOOK.endpoint_id}", "${WEBHOOK.delivery_id}");`,
  },
  listEvents: {
    query: "type=order.completed&limit=20",
    sdk: 'for await (const event of client.events.list({ type: "order.completed" })) {\n  console.log(event.id, event.created_at, event.data);\n}',
  },
  getEvent: {
    sdk: `const event = await client.events.get("${WEBHOOK.event_id}");\nconsole.log(event.type, event.data);`,
  },
  adminCreatePartner: { body: { name: "Acme Travel" } },
  adminIssueApiKey: {
    path: { partner_id: EXAMPLE.partner_id },
    body: { name: "Reporting", scope: "read_only", allowed_ips: ["203.0.113.0/24"] },
  },
  adminRevokeApiKey: { path: { key_id: EXAMPLE.key_id } },
  adminCreditWallet: {
    path: { partner_id: EXAMPLE.partner_id },
    body: { amount_minor: 100000, reference: "bank-transfer-123" },
  },
  adminAdjustWallet: {
    path: { partner_id: EXAMPLE.partner_id },
    body: { amount_minor: -350, reason: "Card fee on bank-transfer-123", reference: "adjustment-2026-11-07" },
  },
  adminSettleHeldRefund: { body: { outcome: "cancelled" } },
  adminRefundOrder: { body: { reason: "Traveller's trip cancelled; agreed with the partner" } },
  adminListPartners: { query: "q=acme&status=active&limit=20" },
  adminUpdatePartner: { body: { status: "suspended", reason: "Invoice 2026-10 unpaid; see ticket 4411" } },
  adminSettleOrder: { body: { outcome: "failed", reason: "Carrier ticket 8812: never provisioned" } },
  adminInviteUser: { body: { email: "maria@acme-travel.example", role: "support" } },
  adminListAuditLog: { query: `partner_id=${EXAMPLE.partner_id}&action=wallet.credited` },
  adminListPartnerOrders: { path: { partner_id: EXAMPLE.partner_id }, query: "q=lima&status=refunded" },
  listAuditLog: { query: "action=api_key.created&from=2026-11-01" },
};

const SDK_SETUP =
  'import { EsimClient } from "@esim-partner/sdk";\n\n' +
  "const client = new EsimClient({ apiKey: process.env.ESIM_API_KEY!, baseUrl: process.env.ESIM_BASE_URL! });\n";

function curl(method: string, path: string, op: Json): string {
  const sample = SAMPLES[String(op.operationId)] ?? {};
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) =>
    String(sample.path?.[name] ?? PATH_EXAMPLES[name] ?? `{${name}}`),
  );
  const url = `$BASE_URL${filled}${sample.query ? `?${sample.query}` : ""}`;
  const lines = [`curl -X ${method.toUpperCase()} "${url}"`];
  const tags = (op.tags ?? []) as string[];
  if (tags.includes("Operator")) lines.push('-H "Authorization: Bearer $ADMIN_TOKEN"');
  else if (!tags.includes("Service")) lines.push('-H "Authorization: Bearer $API_KEY"');
  for (const [name, value] of Object.entries(sample.headers ?? {})) lines.push(`-H "${name}: ${value}"`);
  if (sample.body) {
    lines.push('-H "Content-Type: application/json"');
    lines.push(`-d '${JSON.stringify(sample.body)}'`);
  }
  return lines.join(" \\\n  ");
}

/** Adds `x-codeSamples` to every operation of `document` (in place) and returns it. */
export function withCodeSamples<T>(document: T): T {
  const paths = ((document as Json).paths ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const samples: CodeSample[] = [];
      const sdk = SAMPLES[String(op.operationId)]?.sdk;
      if (sdk) samples.push({ lang: "TypeScript", label: "SDK", source: SDK_SETUP + sdk });
      samples.push({ lang: "Shell", label: "curl", source: curl(method, path, op) });
      op["x-codeSamples"] = samples;
    }
  }
  return document;
}
