// Values resolved when a request is sent, against what exists by then.

/** A value of a kind (a cart key, an ICCID...) picked from the live fixtures when the request is sent. */
export class Ref {
  readonly kind: RefKind;
  readonly n: number;
  readonly field: string | undefined;
  constructor(kind: RefKind, n: number, field?: string) {
    this.kind = kind;
    this.n = n;
    this.field = field;
  }
}

/** A long string, materialized only when the request is sent. */
export class Huge {
  readonly length: number;
  readonly unit: string;
  constructor(length: number, unit: string) {
    this.length = length;
    this.unit = unit;
  }
  toString(): string {
    return this.unit.repeat(Math.ceil(this.length / this.unit.length)).slice(0, this.length);
  }
}

/** A value (a Ref, typically) with text appended once it is resolved. */
export class Appended {
  readonly base: unknown;
  readonly suffix: string;
  constructor(base: unknown, suffix: string) {
    this.base = base;
    this.suffix = suffix;
  }
}

/** A path segment sent exactly as given, not percent-encoded. */
export class RawSegment {
  readonly raw: string;
  constructor(raw: string) {
    this.raw = raw;
  }
}

export type RefKind =
  | "package_id"
  | "external_package_id"
  | "topup_choice"
  | "cart_key"
  | "order_id"
  | "iccid"
  | "partner_id"
  | "key_id"
  | "destination_code"
  | "email"
  | "phone"
  | "person_name"
  | "client_reference"
  | "cursor"
  | "idempotency_key"
  | "credit_reference"
  | "etag"
  | "endpoint_id"
  | "delivery_id"
  | "event_id"
  | "webhook_url";

/** Body, path, query and header fields whose valid values come from the fixtures. */
export const FIELD_REFS: Record<string, RefKind> = {
  package_id: "package_id",
  external_package_id: "external_package_id",
  cart_key: "cart_key",
  orderID: "order_id",
  iccid: "iccid",
  partner_id: "partner_id",
  key_id: "key_id",
  destination_code: "destination_code",
  email: "email",
  phone: "phone",
  first_name: "person_name",
  last_name: "person_name",
  client_reference: "client_reference",
  cursor: "cursor",
  "idempotency-key": "idempotency_key",
  "if-none-match": "etag",
  reference: "credit_reference",
  endpoint_id: "endpoint_id",
  delivery_id: "delivery_id",
  event_id: "event_id",
  url: "webhook_url",
};
