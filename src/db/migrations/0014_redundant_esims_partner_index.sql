-- esims_partner_idx (partner_id) is the leading column of esims_partner_page_idx (partner_id,
-- seq desc) and of esims_partner_status_idx: either serves every lookup by partner it served (the
-- foreign key's checks on partners included), and each purchase paid one more index insert for it
-- (issue 14). No other index of ours is a prefix of another (checked on pg_index).
drop index if exists esims_partner_idx;
