-- Events older than GET /v1/events' 30 days are deleted, with their deliveries, by the hourly
-- `purge_old_events` job (src/webhooks/purge-old-events.ts). Until now both tables only grew.
-- Deleting an event needs its deliveries found by event: the foreign key's check (or the purge's
-- own delete) reads webhook_deliveries by event_id, and no index led with it, so each deleted
-- event would have read the whole table. The unique pair (endpoint_id, event_id) becomes
-- (event_id, endpoint_id): the same rule, the same index count, so a delivery's writes cost what
-- they did. `on conflict (endpoint_id, event_id)` infers a unique index by its set of columns, so
-- the insert finds the new one, this release's and the previous one's alike; lookups by endpoint
-- use webhook_deliveries_page_idx.
-- Locks: building the index holds webhook_deliveries' SHARE lock (deliveries are neither made nor
-- recorded meanwhile; events and purchases go on), and dropping the old constraint its ACCESS
-- EXCLUSIVE lock until the commit that follows.
create unique index webhook_deliveries_event_endpoint_key on webhook_deliveries (event_id, endpoint_id);
alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_event_id_key;
