-- The audit log's reads and the refund's actor (issue 31). Numbered 0027: 0024-0026 are taken by
-- the people branches (user sessions, WebAuthn challenges, SSO attempts).
--
-- 1. GET /v1/audit-log and GET /admin/audit-log filter by action, newest first (audit_seq
--    descending). 0023's (partner_id, audit_seq) serves a partner's log unfiltered and the primary
--    key the operator's; these serve the same with an action, so a rare action is found by an
--    index range, not by walking the whole log. Date bounds filter the rows such a scan reads.
create index audit_log_partner_action_idx on audit_log (partner_id, action, audit_seq);
create index audit_log_action_idx on audit_log (action, audit_seq);

-- 2. A refund is credited in a later transaction than the request that asked for it, possibly by a
--    retry or the sweep (src/refunds/): the intent keeps who asked, so the credit's transaction
--    writes order.refunded with that actor, once. Null on intents written before this migration
--    (their refunds are audited as the system's).
alter table order_refunds
  add column requested_by_type text check (requested_by_type in ('user', 'api_key', 'operator', 'system')),
  add column requested_by_id text,
  add column requested_by_email text,
  add column requested_by_ip text,
  -- The operator's reason (POST /admin/orders/{orderID}/refund); null for a partner's refund.
  add column requested_reason text check (length(requested_reason) <= 500);
