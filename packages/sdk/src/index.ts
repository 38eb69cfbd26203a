// @esim-partner/sdk: the typed client of the Partner eSIM Ordering API.
export {
  type ClientOptions,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  EsimClient,
  EsimClient as default,
} from "./client.ts";
export { CursorList, type CursorPage } from "./core/pagination.ts";
export type { RequestOptions } from "./core/transport.ts";
export {
  ApiError,
  ConnectionError,
  type ErrorCode,
  EsimSdkError,
  type FieldError,
  isApiError,
  TimeoutError,
  WebhookVerificationError,
} from "./errors.ts";
export type { operations, paths } from "./generated/openapi.ts";
export { CatalogChangeFeed } from "./resources/catalog.ts";
export type { TopUpOptions } from "./resources/topups.ts";
export type * from "./types.ts";
export {
  signWebhook,
  type VerifyWebhookInput,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookHeaders,
} from "./webhooks.ts";
