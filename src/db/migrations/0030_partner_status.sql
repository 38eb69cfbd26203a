-- A partner's standing (issue 32): the operator suspends a partner (its keys and people may read,
-- every write answers 403 partner_suspended) and reactivates it. Numbered 0030: 0028, 0029 and
-- 0031 are taken by the other branches of issue 32.
--
-- 1. status, with the operator's reason and time while suspended (shown on the partner's console
--    banner): both set exactly while suspended, so a reactivated partner keeps no stale reason
--    (the audit log keeps the history).
alter table partners
  add column status text not null default 'active'
    constraint partners_status_check check (status in ('active', 'suspended')),
  add column suspended_reason text
    constraint partners_suspended_reason_check check (length(suspended_reason) between 1 and 500),
  add column suspended_at timestamptz,
  add constraint partners_suspension_check check (
    (status = 'suspended') = (suspended_at is not null)
    and (status = 'suspended') = (suspended_reason is not null));

-- 2. GET /admin/partners pages newest first by (created_at, partner_id): this index serves each page
--    as a range, whatever the number of partners. A name search (contains, case-insensitive) reads
--    the same range and filters it: partners are counted in thousands, not millions.
create index partners_newest_idx on partners (created_at desc, partner_id desc);
