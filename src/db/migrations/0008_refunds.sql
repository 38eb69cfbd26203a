-- Refunds (contract: "Order additions"). Purchases in reverse: the carrier cancels first, then one
-- transaction posts a transfer back to the wallet naming the order and marks the order refunded.
--
-- 1. An order may end `refunded` (from completed only, src/refunds/); it keeps its ICCID.
alter table orders drop constraint orders_status_check;
alter table orders
  add constraint orders_status_check check (status in ('pending', 'completed', 'failed', 'refunded')),
  add column refunded_at timestamptz,
  add constraint refunded_iff_refunded_at check ((status = 'refunded') = (refunded_at is not null));

-- 2. The money back: a posted transfer revenue -> wallet of kind 'refund' whose reference is the
--    order id. At most one per order (this index), for exactly the order's total (refundToWallet
--    checks it against the order's posted purchase; the ledger audit checks it again).
alter table ledger_transfers drop constraint ledger_transfers_kind_check;
alter table ledger_transfers
  add constraint ledger_transfers_kind_check check (kind in ('wallet_credit', 'purchase', 'refund')),
  add constraint refund_is_posted check (kind <> 'refund' or state = 'posted');
create unique index ledger_transfers_refund_idx on ledger_transfers (reference) where kind = 'refund';

-- 3. The refund intent, written before the carrier is asked (like a pending order): `refunding`
--    with a lease while someone drives it; a sweep finishes refunds whose lease expired (their
--    driver died or the carrier did not answer), claimed FOR UPDATE SKIP LOCKED. A carrier refusal
--    deletes the intent (the order stays completed); success makes it `refunded` in the
--    transaction that credits the wallet.
create table order_refunds (
  order_id text primary key references orders (order_id),
  partner_id text not null references partners (partner_id),
  state text not null check (state in ('refunding', 'refunded')),
  lease_until timestamptz,
  lease_token text,
  attempts integer not null default 0 check (attempts >= 0),
  last_error text check (length(last_error) <= 500),
  created_at timestamptz not null default now(),
  refunded_at timestamptz,
  constraint refund_refunded_iff_at check ((state = 'refunded') = (refunded_at is not null))
);
create index order_refunds_due_idx on order_refunds (lease_until) where state = 'refunding';

-- 4. An Idempotency-Key of POST /orders/{orderID}/refund names the order it refunds here (order_id
--    stays the order a top-up key created), so one key table serves both with the same rules.
alter table idempotency_keys add column refund_of text references orders (order_id);
create index idempotency_keys_refund_idx on idempotency_keys (refund_of) where refund_of is not null;

-- 5. Statements in O(page): each posted transfer keeps the settled balance (posted credits minus
--    posted debits) of the one partner wallet it moves, right after it. Written by the statement
--    that posts it, under the wallet's row lock, beside posted_seq (src/ledger/ledger.sql.ts): per
--    wallet, postings take turns on that lock, so each value is the previous posting's plus this
--    amount, i.e. the running sum of the wallet's transfers in posted_seq order that 0006 derived
--    on every read. The check below makes a posting that forgets it fail; the ledger audit
--    re-derives the chain from the transfers (walletBalancesMatchTransfers). Existing rows: backfilled
--    from that same running sum.
alter table ledger_transfers add column wallet_balance_after_minor bigint;
with moves as (
  select t.transfer_id, a.account_id, t.posted_seq,
         case when t.credit_account_id = a.account_id then t.amount_minor else -t.amount_minor end as signed_minor
  from ledger_transfers t
  join ledger_accounts a on a.kind = 'partner_wallet' and a.account_id in (t.credit_account_id, t.debit_account_id)
  where t.posted_seq is not null
), running as (
  select transfer_id, sum(signed_minor) over (partition by account_id order by posted_seq) as after_minor from moves
)
update ledger_transfers t set wallet_balance_after_minor = r.after_minor
from running r where r.transfer_id = t.transfer_id;
alter table ledger_transfers
  add constraint posted_has_wallet_balance check ((state = 'posted') = (wallet_balance_after_minor is not null));
