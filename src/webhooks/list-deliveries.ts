// Partner use cases on an endpoint's deliveries: the log (newest first, keyset pages, optional
// status filter) and the manual retry. The endpoint must be the partner's; a delivery of another
// endpoint is 404 delivery_not_found like an unknown one.
import { type Static, Type } from "typebox";
import type { AppContext } from "../shared/context.ts";
import { ApiError } from "../shared/errors.ts";
import { seqCursor } from "../shared/seq-cursor.ts";
import {
  countFailedDeliveries,
  notifyDeliveriesDue,
  pageOfDeliveries,
  retryDelivery,
} from "./deliveries.sql.ts";
import { requireEndpoint } from "./manage-endpoint.ts";
import { Delivery, type DeliveryBody, renderDelivery } from "./render-webhooks.ts";

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

const cursor = seqCursor("d1");

export const DeliveryPage = Type.Object(
  {
    data: Type.Array(Delivery),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: "Pass as `cursor` for the next page.",
    }),
  },
  { additionalProperties: false },
);

export async function listDeliveries(
  ctx: AppContext,
  input: {
    partner_id: string;
    endpoint_id: string;
    status: string | null;
    limit: number;
    cursor: string | null;
  },
): Promise<Static<typeof DeliveryPage>> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_PAGE_SIZE) {
    throw new Error(`listDeliveries: limit ${input.limit} outside 1-${MAX_PAGE_SIZE}`);
  }
  const before_seq = input.cursor === null ? null : cursor.decode(input.cursor);
  await requireEndpoint(ctx, input.partner_id, input.endpoint_id);
  const rows = await pageOfDeliveries(ctx.db, { ...input, before_seq, limit: input.limit + 1 });
  const page = rows.slice(0, input.limit);
  const has_more = rows.length > input.limit;
  return {
    data: page.map(renderDelivery),
    has_more,
    next_cursor: has_more ? cursor.encode(page.at(-1)!.seq) : null,
  };
}

/**
 * Makes the delivery due now, whatever its state (a failed one gets one more attempt, a succeeded
 * one is sent again). An endpoint that is disabled keeps it waiting until it is enabled.
 */
export async function retryDeliveryNow(
  ctx: AppContext,
  partner_id: string,
  endpoint_id: string,
  delivery_id: string,
): Promise<DeliveryBody> {
  await requireEndpoint(ctx, partner_id, endpoint_id);
  const row = await retryDelivery(ctx.db, endpoint_id, delivery_id);
  if (row === null) throw new ApiError("delivery_not_found", "No such delivery for this endpoint.");
  await notifyDeliveriesDue(ctx.db);
  return renderDelivery(row);
}

/** Counted up to this many: the console's overview shows "1000+" beyond. */
export const FAILED_COUNT_CAP = 1000;

/** The partner's deliveries given up on, across its endpoints (the console's overview). */
export async function failedDeliveries(
  ctx: AppContext,
  partner_id: string,
): Promise<{ count: number; capped: boolean }> {
  const count = await countFailedDeliveries(ctx.db, partner_id, FAILED_COUNT_CAP);
  return { count, capped: count >= FAILED_COUNT_CAP };
}
