// Whether a cart became an order, as a SQL condition: the lapsed-cart purge (carts/, below
// orders) keeps every cart an order names, and asks orders how to tell, inside its own statement.
import type { CartHasOrder } from "../carts/purge-expired-carts.ts";
import { orderOfCartExists } from "./orders.sql.ts";

export const cartHasOrder: CartHasOrder = orderOfCartExists;
