// The statements behind POST /orders, GET /orders and GET /orders/{reference}, and the
// organisation's balance they move.
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type Organisation = {
  name: string;
  currency: string;
  balance_cents: number;
  refunds_enabled: boolean;
};

export type OrderLine = {
  type: "bundle";
  item: string;
  quantity: number;
  price_cents: number;
  allow_reassign: boolean;
};

export type OrderRow = {
  reference: string;
  assigned: boolean;
  total_cents: number;
  currency: string;
  source_ip: string | null;
  lines: OrderLine[];
  created_at: Date;
  /** False while an asynchronous order is still being processed. */
  ready: boolean;
};

/** An eSIM that a line of an order put a bundle on. */
export type OrderEsim = {
  order_reference: string;
  line_index: number;
  iccid: string;
  matching_id: string;
  smdp_address: string;
};

const ORGANISATION_COLUMNS = "name, currency, balance_cents::float8 as balance_cents, refunds_enabled";

export async function selectOrganisation(db: Queryable): Promise<Organisation> {
  const { rows } = await db.query<Organisation>(
    `select ${ORGANISATION_COLUMNS} from esimgo_sim.organisation where id = 1`,
  );
  return rows[0]!;
}

/** Orders and refunds take this row lock first: balance checks and debits never interleave. */
export async function lockOrganisation(client: pg.PoolClient): Promise<Organisation> {
  const { rows } = await client.query<Organisation>(
    `select ${ORGANISATION_COLUMNS} from esimgo_sim.organisation where id = 1 for update`,
  );
  return rows[0]!;
}

/** Positive: a credit (refund, sandbox top-up); negative: a debit. The check constraint refuses overdraft. */
export async function moveBalance(db: Queryable, delta_cents: number): Promise<number> {
  const { rows } = await db.query<{ balance_cents: number }>(
    `update esimgo_sim.organisation set balance_cents = balance_cents + $1::bigint where id = 1
     returning balance_cents::float8 as balance_cents`,
    [delta_cents],
  );
  return rows[0]!.balance_cents;
}

export async function updateOrganisation(
  db: Queryable,
  patch: { balance_cents?: number; refunds_enabled?: boolean },
): Promise<Organisation> {
  const { rows } = await db.query<Organisation>(
    `update esimgo_sim.organisation
     set balance_cents = coalesce($1::bigint, balance_cents), refunds_enabled = coalesce($2::boolean, refunds_enabled)
     where id = 1 returning ${ORGANISATION_COLUMNS}`,
    [patch.balance_cents ?? null, patch.refunds_enabled ?? null],
  );
  return rows[0]!;
}

export async function insertOrder(
  client: pg.PoolClient,
  order: {
    reference: string;
    assigned: boolean;
    total_cents: number;
    currency: string;
    source_ip: string;
    lines: OrderLine[];
    async_ms: number;
  },
): Promise<void> {
  await client.query(
    `insert into esimgo_sim.orders (reference, assigned, total_cents, currency, source_ip, lines, ready_at)
     values ($1, $2, $3, $4, $5, $6::jsonb, now() + $7::integer * interval '1 millisecond')`,
    [
      order.reference,
      order.assigned,
      order.total_cents,
      order.currency,
      order.source_ip,
      JSON.stringify(order.lines),
      order.async_ms,
    ],
  );
}

const ORDER_COLUMNS = `reference, assigned, total_cents::float8 as total_cents, currency, source_ip, lines,
  created_at, now() >= ready_at as ready`;

export async function selectOrder(db: Queryable, reference: string): Promise<OrderRow | null> {
  const { rows } = await db.query<OrderRow>(
    `select ${ORDER_COLUMNS} from esimgo_sim.orders where reference = $1`,
    [reference],
  );
  return rows[0] ?? null;
}

/** Bounds on created_at; each null bound is ignored. */
export type CreatedAtBounds = {
  gte: Date | null;
  gt: Date | null;
  lte: Date | null;
  lt: Date | null;
  eq: Date | null;
};

/** Newest first, as a portal lists them. */
export async function selectOrders(
  db: Queryable,
  bounds: CreatedAtBounds,
  limit: number,
  offset: number,
): Promise<OrderRow[]> {
  const { rows } = await db.query<OrderRow>(
    `select ${ORDER_COLUMNS} from esimgo_sim.orders
     where ($1::timestamptz is null or created_at >= $1) and ($2::timestamptz is null or created_at > $2)
       and ($3::timestamptz is null or created_at <= $3) and ($4::timestamptz is null or created_at < $4)
       and ($5::timestamptz is null or created_at = $5)
     order by created_at desc, reference
     limit $6 offset $7`,
    [bounds.gte, bounds.gt, bounds.lte, bounds.lt, bounds.eq, limit, offset],
  );
  return rows;
}

export async function selectOrderEsims(db: Queryable, references: string[]): Promise<OrderEsim[]> {
  const { rows } = await db.query<OrderEsim>(
    `select a.order_reference, a.line_index, a.iccid, e.matching_id, e.smdp_address
     from esimgo_sim.assignments a join esimgo_sim.esims e on e.iccid = a.iccid
     where a.order_reference = any($1::text[])
     order by a.order_reference, a.line_index, a.id`,
    [references],
  );
  return rows;
}
