// Named types for what partners handle, all read from the generated OpenAPI types, so a change
// to the API's schemas shows up here at `npm run sdk:types`, never by hand.
import type { operations } from "./generated/openapi.ts";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type RequestBody<Op extends keyof operations> = operations[Op] extends { requestBody: infer R }
  ? Json<NonNullable<R>>
  : never;
type Ok<Op extends keyof operations, S extends number> =
  operations[Op]["responses"] extends Record<S, infer R> ? Json<R> : never;

export type DestinationPackages = Ok<"listDestinationPackages", 200>;
export type Package = DestinationPackages["data"][number];
export type Money = Package["wholesale_price"];

export type CreateCartParams = RequestBody<"createCart">;
export type Cart = Ok<"createCart", 201>;

export type SubmitOrderParams = RequestBody<"submitOrder">;
export type Order = Ok<"submitOrder", 200>;
export type Purchase = Order["purchases"][number];
export type OrderPage = Ok<"listOrders", 200>;
type ListOrdersQuery = NonNullable<operations["listOrders"]["parameters"]["query"]>;
/** The document types `limit` as a digit string (1-100); the SDK takes a number and sends its digits. */
export type ListOrdersParams = Omit<ListOrdersQuery, "limit"> & { limit?: number };

export type AvailableTopUps = Ok<"listAvailableTopUps", 200>;
export type TopUpOffer = AvailableTopUps["data"][number];
export type SubmitTopUpParams = RequestBody<"submitTopUp">;

export type Wallet = Ok<"getWallet", 200>;
