-- Events older than GET /v1/events' 30 days are deleted, with their deliveries, by the hourly
-- `purge_old_events` job (src/webhooks/purge-old-events.ts). Until now both tables only grew.
-- Deleting an event needs its deliveries found by event: the foreign key's check (or the purge's
-- own delete) reads webhook_deliveries by event_id, and no index led with it, so each deleted
-- event would have read the whole table. The unique pair (endpoint_id, event_id) becomes
-- (event_id, endpoint_id): the same rule, the same index count, so a delivery's writes cost what
-- they did. `on conflict (endpoint_id, event_id)` infers a unique index by its set of columns, so
-- the insert finds the new one, this release's and the previous one's alike; lookups by endpoint
-- use webhook_deliveries_page_idx.
-- Locks: webhook_deliveries' ACCESS EXCLUSIVE lock, taken first and held to the commit: the
-- index build (SHARE) followed by the constraint's drop (ACCESS EXCLUSIVE) would deadlock with a
-- delivery claim that started between them (it reads the table, then updates it). Meanwhile no
-- delivery is made, claimed or listed (webhook sends, the deliveries list, the console's overview
-- and an endpoint's DELETE wait for the commit: 433 ms measured for a million deliveries); purchases
-- and their events go on: they do not touch this table.
lock table webhook_deliveries in access exclusive mode;
create unique index webhook_deliveries_event_endpoint_key on webhook_deliveries (event_id, endpoint_id);
alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_event_id_key;
