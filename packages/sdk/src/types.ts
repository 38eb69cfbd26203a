// Named types for what partners handle, all read from the generated OpenAPI types, so a change
// to the API's schemas shows up here at `npm run sdk:types`, never by hand.
import type { operations } from "./generated/openapi.ts";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody?: infer R }
  ? Json<NonNullable<R>>
  : never;
type Ok<Op extends keyof operations, S extends number> =
  operations[Op]["responses"] extends Record<S, infer R> ? Json<R> : never;

export type DestinationPackages = Ok<"listDestinationPackages", 200>;
export type Package = DestinationPackages["data"][number];
export type Money = Package["wholesale_price"];
export type PackageNetwork = Package["networks"][number];
export type FairUse = NonNullable<Package["fair_use"]>;
export type Destinations = Ok<"listDestinations", 200>;
export type Destination = Destinations["data"][number];
export type CompatibleDevices = Ok<"listCompatibleDevices", 200>;
export type CompatibleDevice = CompatibleDevices["data"][number];
/** The document types `limit` as a digit string (1-5000); the SDK takes a number and sends its digits. */
export type CompatibleDevicesParams = { q?: string; limit?: number };

/** `quantity` (1-50, default 1): more than 1 is a group order, bought by one submit. */
export type CreateCartParams = RequestBody<"createCart">;
export type Cart = Ok<"createCart", 201>;

/** `travellers`: one per eSIM of the cart (exactly its `quantity`), each emailed their own eSIM. */
export type SubmitOrderParams = RequestBody<"submitOrder">;
/** One traveller of a group order: `purchases[i]` is `travellers[i]`'s eSIM. */
export type Traveller = NonNullable<SubmitOrderParams["travellers"]>[number];
export type Order = Ok<"submitOrder", 200>;
/**
 * One eSIM of an order, by `status`: `completed` has the eSIM (`iccid`, `qr_code`, …), `failed`
 * (only in a group order) was refused by the carrier and not charged. Narrow on `status` before
 * reading the eSIM's fields: `if (purchase.status === "completed") purchase.iccid`.
 */
export type Purchase = Order["purchases"][number];
export type CompletedPurchase = Extract<Purchase, { status: "completed" }>;
export type FailedPurchase = Extract<Purchase, { status: "failed" }>;
export type PurchaseStatus = Purchase["status"];
export type OrderPage = Ok<"listOrders", 200>;
export type ResendOrderEmailParams = RequestBody<"resendOrderEmail">;
export type ResentEmail = Ok<"resendOrderEmail", 202>;
export type OrderEmails = Ok<"listOrderEmails", 200>;
export type OrderEmail = OrderEmails["data"][number];
export type OrderEvents = Ok<"listOrderEvents", 200>;
type ListOrdersQuery = NonNullable<operations["listOrders"]["parameters"]["query"]>;
/** The document types `limit` as a digit string (1-100); the SDK takes a number and sends its digits. */
export type ListOrdersParams = Omit<ListOrdersQuery, "limit"> & { limit?: number };

export type AvailableTopUps = Ok<"listAvailableTopUps", 200>;
export type TopUpOffer = AvailableTopUps["data"][number];
export type SubmitTopUpParams = RequestBody<"submitTopUp">;

export type Wallet = Ok<"getWallet", 200>;
export type SetLowBalanceAlertParams = RequestBody<"setLowBalanceAlert">;

/** Your brand on traveller emails and install pages (`accent_color_applied`: the colour they use). */
export type Branding = Ok<"getBranding", 200>;
/** Fields left out keep their value; null clears one. */
export type SetBrandingParams = RequestBody<"setBranding">;
export type NotificationSettings = Ok<"getNotificationSettings", 200>;
/** Fields left out keep their value. */
export type SetNotificationSettingsParams = RequestBody<"setNotificationSettings">;

/** The digit-string page size of the document, taken as a number by the SDK (1-100). */
type NumericLimit<Q> = Omit<Q, "limit"> & { limit?: number };

export type WalletTransactionPage = Ok<"listWalletTransactions", 200>;
export type WalletTransaction = WalletTransactionPage["data"][number];
type ListWalletTransactionsQuery = NonNullable<operations["listWalletTransactions"]["parameters"]["query"]>;
export type ListWalletTransactionsParams = NumericLimit<ListWalletTransactionsQuery>;
/** The CSV statement takes the date range only: it is every row of the range at once. */
export type WalletTransactionsCsvParams = Pick<ListWalletTransactionsQuery, "from" | "to">;

export type Esim = Ok<"getEsim", 200>;
export type EsimStatus = Esim["status"];
export type Bundle = Esim["bundles"][number];
export type EsimInstallation = Esim["installation"];
export type EsimPage = Ok<"listEsims", 200>;
type ListEsimsQuery = NonNullable<operations["listEsims"]["parameters"]["query"]>;
export type ListEsimsParams = NumericLimit<ListEsimsQuery>;
/** The QR image's width and height in pixels (128-1024, default 512). */
export type EsimQrParams = { size?: number };
export type SimulateEsimParams = RequestBody<"simulateEsimEvent">;

export type WebhookEndpointPage = Ok<"listWebhookEndpoints", 200>;
export type WebhookEndpoint = WebhookEndpointPage["data"][number];
export type WebhookEndpointStatus = WebhookEndpoint["status"];
export type CreateWebhookEndpointParams = RequestBody<"createWebhookEndpoint">;
/** The endpoint and its `secret` (`whsec_…`): shown in this answer only, keep it. */
export type WebhookEndpointWithSecret = Ok<"createWebhookEndpoint", 201>;
export type UpdateWebhookEndpointParams = RequestBody<"updateWebhookEndpoint">;
export type RotatedWebhookSecret = Ok<"rotateWebhookSecret", 200>;
export type WebhookTestEvent = Ok<"sendWebhookTestEvent", 202>;
export type WebhookDeliveryPage = Ok<"listWebhookDeliveries", 200>;
export type WebhookDelivery = WebhookDeliveryPage["data"][number];
type ListWebhookDeliveriesQuery = NonNullable<operations["listWebhookDeliveries"]["parameters"]["query"]>;
export type ListWebhookDeliveriesParams = NumericLimit<ListWebhookDeliveriesQuery>;

export type CatalogChangePage = Ok<"listCatalogChanges", 200>;
export type CatalogChange = CatalogChangePage["data"][number];
type ListCatalogChangesQuery = NonNullable<operations["listCatalogChanges"]["parameters"]["query"]>;
export type ListCatalogChangesParams = NumericLimit<ListCatalogChangesQuery>;

export type ApiEventPage = Ok<"listEvents", 200>;
/** One recorded event (named so that it does not shadow the DOM's global `Event`). */
export type ApiEvent = Ok<"getEvent", 200>;
export type EventType = ApiEvent["type"];
type ListEventsQuery = NonNullable<operations["listEvents"]["parameters"]["query"]>;
export type ListEventsParams = NumericLimit<ListEventsQuery>;
