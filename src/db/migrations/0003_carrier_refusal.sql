-- The carrier's own words when it refuses an order are for the operator (support, disputes with
-- the carrier), never for partners: they may change without notice, name internals or contain
-- anything. Partners get a fixed detail per refusal (src/orders/stored-outcome.ts); the carrier's
-- text moves here. failure_detail is no longer written.
alter table orders add column carrier_refusal text check (length(carrier_refusal) <= 500);
update orders set carrier_refusal = failure_detail, failure_detail = null
where failure_code = 'carrier_error';
