// Many orders at once, in SQL (generate_series), for the search's plans test and the bench's search
// scenario: a million rows in seconds, where a million purchases through HTTP would take hours.
// Every row is what the service itself stores (the table's checks hold), with travellers whose
// emails, last names, client references and ICCIDs are searchable and predictable from `n`:
//   n-th order of `tag`: email `traveller.<tag>.<n>@example.com` (travellers repeat: n / 2),
//   last name one of LAST_NAMES, or for one in ten a rare one (`Q` and 7 hex digits of md5(n)), client reference `<TAG>-<n, 8 digits>`,
//   type esim (4 in 5, with its cart and eSIM) or topup, status completed / failed / refunded.
import { type Kysely, sql } from "kysely";
import type { Database } from "../../src/db/schema.ts";

/** Common surnames: a prefix of one matches its share of rows, as in a real traveller base. */
export const LAST_NAMES = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Jones",
  "Garcia",
  "Miller",
  "Davis",
  "Rodriguez",
  "Martinez",
  "Muller",
  "Schmidt",
  "Schneider",
  "Fischer",
  "Weber",
  "Meyer",
  "Wagner",
  "Becker",
  "Schulz",
  "Hoffmann",
  "Martin",
  "Bernard",
  "Dubois",
  "Thomas",
  "Robert",
  "Richard",
  "Petit",
  "Durand",
  "Leroy",
  "Moreau",
  "Rossi",
  "Russo",
  "Ferrari",
  "Esposito",
  "Bianchi",
  "Romano",
  "Colombo",
  "Ricci",
  "Marino",
  "Greco",
  "Silva",
  "Santos",
  "Ferreira",
  "Pereira",
  "Oliveira",
  "Costa",
  "Sato",
  "Suzuki",
  "Takahashi",
  "Tanaka",
];

/** Luhn check digit of the text expression `payload` (19 digits: a 20-digit ICCID), in SQL. */
const LUHN = `(10 - (select sum(case when k % 2 = 0
                                then (substr(payload, 19 - k, 1)::int * 2) % 10 + (substr(payload, 19 - k, 1)::int * 2) / 10
                                else substr(payload, 19 - k, 1)::int end)
                     from generate_series(0, 18) k) % 10) % 10`;

/**
 * Inserts orders number `first`..`last` of `partner_id` (partner number `partner_no` names its
 * ICCIDs, `tag` its emails and references), created one minute apart backwards from now: the
 * newest is order `last`. Statements of at most `batch` rows, so that a million stay in memory.
 */
export async function seedOrders(
  db: Kysely<Database>,
  input: { partner_id: string; partner_no: number; tag: string; first: number; last: number; batch?: number },
): Promise<void> {
  const batch = input.batch ?? 100_000;
  const names = LAST_NAMES;
  for (let from = input.first; from <= input.last; from += batch) {
    const to = Math.min(input.last, from + batch - 1);
    await db.transaction().execute(async (trx) => {
      // A batch of 100,000 rows takes seconds, longer than a pool's statement_timeout allows a request.
      await sql`set local statement_timeout = 0`.execute(trx);
      await sql`
      create temporary table seed_rows (
        n bigint, order_id text, cart_key text, type text, status text, iccid text, created_at timestamptz)
      on commit drop`.execute(trx);
      await sql
        .raw(`
      with rows as (
        -- A top-up (every fifth order) tops up the eSIM the order before it bought.
        select n, '8944' || lpad('${input.partner_no}', 3, '0')
                  || lpad((case when n % 5 = 0 then n - 1 else n end)::text, 12, '0') as payload,
               case when n % 5 = 0 then 'topup' else 'esim' end as type,
               case when n % 20 = 1 then 'failed' when n % 20 = 2 then 'refunded' else 'completed' end as status
        from generate_series(${from}, ${to}) n)
      insert into seed_rows
      select n, 'ord_seed${input.partner_no}_' || lpad(n::text, 16, '0'),
             case when type = 'esim' then 'cart_seed${input.partner_no}_' || n end, type, status,
             case when type = 'esim' and status = 'failed' then null else payload || (${LUHN})::text end,
             now() - make_interval(mins => (${input.last} - n)::int)
      from rows`)
        .execute(trx);
      await sql`
      insert into carts (cart_key, partner_id, package_id, external_package_id, data_mb, validity_days, total_minor,
                         currency, created_at, expires_at)
      select cart_key, ${input.partner_id}, 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 1024, 7, 450, 'USD', created_at, created_at + interval '30 minutes'
      from seed_rows where cart_key is not null`.execute(trx);
      await sql`
      insert into orders (order_id, partner_id, type, status, cart_key, package_id, external_package_id, validity_days,
                          total_minor, currency, client_reference, email, phone, first_name, last_name, iccid,
                          topup_iccid, created_at, resolved_at, refunded_at)
      select order_id, ${input.partner_id}, type, status, cart_key, 'fr-1gb-7d', 'CARRIER-FR-1GB-7D', 7, 450, 'USD',
             ${input.tag.toUpperCase()}::text || '-' || lpad(n::text, 8, '0'),
             'traveller.' || ${input.tag}::text || '.' || (n / 2) || '@example.com', '+14155550123', 'Alex',
             -- One traveller in ten has a rare name (the long tail), the rest common ones.
             case when n % 10 = 3 then 'Q' || substr(md5(n::text), 1, 7)
                  else (${names}::text[])[1 + (n * 7919) % ${names.length}] end, iccid,
             case when type = 'topup' then iccid end,
             created_at, created_at + interval '2 seconds',
             case when status = 'refunded' then created_at + interval '1 day' end
      from seed_rows order by n`.execute(trx);
      await sql`
      insert into esims (iccid, partner_id, order_id, package_id, smdp_address, activation_code, created_at)
      select iccid, ${input.partner_id}, order_id, 'fr-1gb-7d', 'smdp.example', 'SEED-' || n, created_at
      from seed_rows where type = 'esim' and iccid is not null order by n`.execute(trx);
    });
  }
}

/**
 * Removes every row seedOrders inserted (ids `ord_seed…`, carts `cart_seed…`), so that what runs
 * after (the bench's ledger audit: seeded orders have no ledger transfers) sees only real orders.
 * Nothing references a seeded row (no purchase, bundle, event or email was made for one; checked
 * first), so the foreign keys' per-row checks are skipped for the delete (session_replication_role
 * `replica`, a superuser's setting: the bench's own PostgreSQL): a million checks would take minutes.
 */
export async function removeSeededOrders(db: Kysely<Database>): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`set local statement_timeout = 0`.execute(trx);
    const referenced = await sql<{ n: number }>`
      select (select count(*) from purchases where order_id like 'ord\\_seed%')
           + (select count(*) from esim_bundles where order_id like 'ord\\_seed%') as n`.execute(trx);
    if (Number(referenced.rows[0]!.n) !== 0)
      throw new Error("removeSeededOrders: seeded orders gained purchases");
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`delete from esims where order_id like 'ord\\_seed%'`.execute(trx);
    const orders = await sql`delete from orders where order_id like 'ord\\_seed%'`.execute(trx);
    await sql`delete from carts where cart_key like 'cart\\_seed%'`.execute(trx);
    return Number(orders.numAffectedRows ?? 0);
  });
}
