// The statements behind the eSIM endpoints (details, list, customerRef, install details, bundles,
// revoke) and the sandbox's device events (install, data use, expiry).
import type pg from "pg";

type Queryable = pg.Pool | pg.PoolClient;

export type EsimRow = {
  iccid: string;
  matching_id: string;
  smdp_address: string;
  pin: string;
  puk: string;
  customer_ref: string | null;
  profile_status: string;
  first_installed_at: Date | null;
  first_used_at: Date | null;
  incompatible: boolean;
  deactivated: boolean;
  created_at: Date;
  last_assigned_at: Date | null;
};

export type AssignmentRow = {
  id: string;
  reference: string;
  iccid: string;
  bundle_name: string;
  description: string;
  price_cents: number;
  duration_days: number;
  initial_bytes: number;
  remaining_bytes: number;
  state: string;
  assigned_at: Date;
  started_at: Date | null;
  ends_at: Date | null;
  alerted_percents: number[];
  /** Whether it is still inside the refund period. */
  refundable_age: boolean;
};

const ESIM_COLUMNS = `e.iccid, e.matching_id, e.smdp_address, e.pin, e.puk, e.customer_ref, e.profile_status,
  e.first_installed_at, e.first_used_at, e.incompatible, e.deactivated_at is not null as deactivated, e.created_at,
  (select max(a.assigned_at) from esimgo_sim.assignments a where a.iccid = e.iccid) as last_assigned_at`;

export async function insertEsim(
  client: pg.PoolClient,
  esim: {
    iccid: string;
    matching_id: string;
    smdp_address: string;
    pin: string;
    puk: string;
    order_reference: string;
  },
): Promise<void> {
  await client.query(
    `insert into esimgo_sim.esims (iccid, matching_id, smdp_address, pin, puk, order_reference)
     values ($1, $2, $3, $4, $5, $6)`,
    [esim.iccid, esim.matching_id, esim.smdp_address, esim.pin, esim.puk, esim.order_reference],
  );
}

export async function nextIccidSerial(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ serial: string }>(
    "select nextval('esimgo_sim.iccid_serial') as serial",
  );
  return Number(rows[0]!.serial);
}

export async function selectEsim(db: Queryable, iccid: string): Promise<EsimRow | null> {
  const { rows } = await db.query<EsimRow>(
    `select ${ESIM_COLUMNS} from esimgo_sim.esims e where e.iccid = $1`,
    [iccid],
  );
  return rows[0] ?? null;
}

/** Locks the eSIMs a top-up or a device event touches, in ICCID order (no deadlock between two). */
export async function lockEsims(client: pg.PoolClient, iccids: string[]): Promise<EsimRow[]> {
  const { rows } = await client.query<EsimRow>(
    `select ${ESIM_COLUMNS} from esimgo_sim.esims e where e.iccid = any($1::text[]) order by e.iccid for update of e`,
    [iccids],
  );
  return rows;
}

/** `pattern` is a LIKE pattern (the caller turned `*` into `%`), or an exact value when exact. */
export async function listEsims(
  db: Queryable,
  filter: { column: "iccid" | "customer_ref" | null; pattern: string; exact: boolean },
  limit: number,
  offset: number,
): Promise<{ rows: EsimRow[]; total: number }> {
  // The column name comes from a closed set in the caller, never from the request.
  const where = filter.column === null ? "true" : `e.${filter.column} ${filter.exact ? "=" : "like"} $3`;
  const params = filter.column === null ? [] : [filter.pattern];
  const [page, count] = await Promise.all([
    db.query<EsimRow>(
      `select ${ESIM_COLUMNS} from esimgo_sim.esims e where ${where}
       order by e.created_at desc, e.iccid limit $1 offset $2`,
      [limit, offset, ...params],
    ),
    // The count's only parameter is the filter's: number it $3 like the page's.
    db.query<{ total: string }>(
      `select count(*) as total from esimgo_sim.esims e where ${where.replace("$3", "$1")}`,
      params,
    ),
  ]);
  return { rows: page.rows, total: Number(count.rows[0]!.total) };
}

export async function updateCustomerRef(
  db: Queryable,
  iccid: string,
  customer_ref: string,
): Promise<boolean> {
  const { rowCount } = await db.query("update esimgo_sim.esims set customer_ref = $2 where iccid = $1", [
    iccid,
    customer_ref,
  ]);
  return rowCount === 1;
}

export async function updateEsimSandbox(
  db: Queryable,
  iccid: string,
  patch: { incompatible?: boolean; deactivated?: boolean },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update esimgo_sim.esims
     set incompatible = coalesce($2::boolean, incompatible),
         deactivated_at = case when $3::boolean is null then deactivated_at
                               when $3 then coalesce(deactivated_at, now()) else null end
     where iccid = $1`,
    [iccid, patch.incompatible ?? null, patch.deactivated ?? null],
  );
  return rowCount === 1;
}

export async function markInstalled(client: pg.PoolClient, iccid: string): Promise<void> {
  await client.query(
    `update esimgo_sim.esims set profile_status = 'Installed', first_installed_at = coalesce(first_installed_at, now())
     where iccid = $1`,
    [iccid],
  );
}

export async function markFirstUse(client: pg.PoolClient, iccid: string): Promise<void> {
  await client.query(
    "update esimgo_sim.esims set first_used_at = now() where iccid = $1 and first_used_at is null",
    [iccid],
  );
}

export type InstallRow = {
  order_reference: string;
  iccid: string;
  matching_id: string;
  smdp_address: string;
  profile_status: string;
  pin: string;
  puk: string;
  first_installed_at: Date | null;
  bundle_name: string;
  deactivated: boolean;
  ready: boolean;
};

/** The eSIMs of orders (by orderReference), one row per assignment, in order. */
export async function selectInstallDetails(db: Queryable, references: string[]): Promise<InstallRow[]> {
  const { rows } = await db.query<InstallRow>(
    `select a.order_reference, e.iccid, e.matching_id, e.smdp_address, e.profile_status, e.pin, e.puk,
            e.first_installed_at, a.bundle_name, e.deactivated_at is not null as deactivated, now() >= o.ready_at as ready
     from esimgo_sim.assignments a
     join esimgo_sim.esims e on e.iccid = a.iccid
     join esimgo_sim.orders o on o.reference = a.order_reference
     where a.order_reference = any($1::text[])
     order by a.order_reference, a.line_index, a.id`,
    [references],
  );
  return rows;
}

export async function selectKnownOrders(db: Queryable, references: string[]): Promise<string[]> {
  const { rows } = await db.query<{ reference: string }>(
    "select reference from esimgo_sim.orders where reference = any($1::text[])",
    [references],
  );
  return rows.map((row) => row.reference);
}

const ASSIGNMENT_COLUMNS = `id::text as id, reference, iccid, bundle_name, description, price_cents::float8 as price_cents,
  duration_days, initial_bytes::float8 as initial_bytes, remaining_bytes::float8 as remaining_bytes, state,
  assigned_at, started_at, ends_at, alerted_percents,
  assigned_at > now() - $2::integer * interval '1 day' as refundable_age`;

/** Ends running bundles whose duration has passed (the next queued one waits for the next data use). */
export async function expireRunning(db: Queryable, iccid: string): Promise<void> {
  await db.query(
    `update esimgo_sim.assignments set state = 'expired'
     where iccid = $1 and state in ('active', 'depleted') and ends_at <= now()`,
    [iccid],
  );
}

/** Oldest first. */
export async function selectAssignments(
  db: Queryable,
  iccid: string,
  refund_period_days: number,
): Promise<AssignmentRow[]> {
  const { rows } = await db.query<AssignmentRow>(
    `select ${ASSIGNMENT_COLUMNS} from esimgo_sim.assignments where iccid = $1 order by id`,
    [iccid, refund_period_days],
  );
  return rows;
}

export async function startAssignment(client: pg.PoolClient, id: string): Promise<void> {
  await client.query(
    `update esimgo_sim.assignments
     set state = 'active', started_at = now(), ends_at = now() + duration_days * interval '1 day'
     where id = $1::bigint`,
    [id],
  );
}

export async function useFromAssignment(
  client: pg.PoolClient,
  assignment: { id: string; remaining_bytes: number; alerted_percents: number[] },
): Promise<void> {
  await client.query(
    `update esimgo_sim.assignments
     set remaining_bytes = $2::bigint, alerted_percents = $3::integer[],
         state = case when $2::bigint = 0 then 'depleted' else state end
     where id = $1::bigint`,
    [assignment.id, assignment.remaining_bytes, assignment.alerted_percents],
  );
}

export async function endAssignmentsNow(client: pg.PoolClient, iccid: string): Promise<void> {
  await client.query(
    `update esimgo_sim.assignments set state = 'expired', ends_at = least(coalesce(ends_at, now()), now())
     where iccid = $1 and state in ('queued', 'active', 'depleted')`,
    [iccid],
  );
}

export async function revokeAssignment(
  client: pg.PoolClient,
  id: string,
  refunded_cents: number | null,
): Promise<void> {
  await client.query(
    `update esimgo_sim.assignments set state = 'revoked', revoked_at = now(), refunded_cents = $2::bigint
     where id = $1::bigint`,
    [id, refunded_cents],
  );
}

export async function insertAssignment(
  client: pg.PoolClient,
  assignment: {
    reference: string;
    order_reference: string;
    line_index: number;
    iccid: string;
    bundle_name: string;
    description: string;
    price_cents: number;
    duration_days: number;
    initial_bytes: number;
  },
): Promise<void> {
  await client.query(
    `insert into esimgo_sim.assignments (reference, order_reference, line_index, iccid, bundle_name, description,
       price_cents, duration_days, initial_bytes, remaining_bytes)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
    [
      assignment.reference,
      assignment.order_reference,
      assignment.line_index,
      assignment.iccid,
      assignment.bundle_name,
      assignment.description,
      assignment.price_cents,
      assignment.duration_days,
      assignment.initial_bytes,
    ],
  );
}
