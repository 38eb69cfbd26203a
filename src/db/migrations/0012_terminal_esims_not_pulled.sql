-- The pull sync leaves alone the eSIMs that nothing will change on its own (issue 11, review):
-- next_sync_at null means "not pulled". Expired, deleted and cancelled eSIMs get it when a signal
-- brings them there (src/esims/pull-schedule.ts); a top-up's completion makes an expired one due
-- again. The claim's `next_sync_at <= now()` passes over nulls, so the partial index
-- esims_sync_due_idx serves it as before.
alter table esims alter column next_sync_at drop not null;
update esims set next_sync_at = null where status in ('expired', 'deleted', 'cancelled');
