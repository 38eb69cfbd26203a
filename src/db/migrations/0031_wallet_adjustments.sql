-- Operator adjustments (issue 32, finance): a correction of a partner's wallet, either sign, with a
-- reason, posted at once. A credit adjustment moves money operator_funding -> wallet, as a credit
-- does; a debit one wallet -> operator_funding. Both sides of every adjustment are the same two
-- accounts, so the unique index over the unordered pair (least, greatest) and the reference makes
-- a reference adjust a wallet once, whatever its sign, even when two requests race: the same
-- reference is never a credit once and a debit the next time.
--
-- The reason lives on the transfer (the partner's statement shows it as the row's description):
-- a domain holds its length, one table CHECK ties it to the kind (a reason iff an adjustment) and
-- says an adjustment is posted, never pending (0015 says why a table carries few CHECKs).
alter domain transfer_kind drop constraint transfer_kind_known;
alter domain transfer_kind add constraint transfer_kind_known
  check (value in ('wallet_credit', 'purchase', 'refund', 'adjustment'));

create domain adjustment_reason as text
  constraint adjustment_reason_length check (length(value) between 1 and 500);

alter table ledger_transfers add column reason adjustment_reason;
alter table ledger_transfers
  add constraint adjustment_has_reason_and_is_posted
  check ((kind = 'adjustment') = (reason is not null) and (kind <> 'adjustment' or state = 'posted'));

create unique index ledger_transfers_adjustment_reference_idx
  on ledger_transfers (least(debit_account_id, credit_account_id), greatest(debit_account_id, credit_account_id), reference)
  where kind = 'adjustment';
