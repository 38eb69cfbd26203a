-- Review 2 (protocol): DownloadOrder's "ICCID not available" (8.2.1/3.3, or a vendor's 3.7) reads as
-- "ours, allocated by an earlier DownloadOrder whose answer was lost" only when such a call of ours
-- may have reached the SM-DP+. Without this column every 3.3 read so, even on the first call: an
-- ICCID another requester holds (an inventory shared or imported by mistake) was then confirmed
-- with our matching ID (theirs taken, if only ALLOCATED) or "released" with a matching ID the
-- SM-DP+ never heard of (a dead activation code, sold). Set before the first DownloadOrder is sent;
-- null: none was, so a 3.3 or 3.7 names someone else's profile and the order is refused.
alter table es2plus_profile_orders add column download_ordered_at timestamptz;
-- Intents of before this migration may have sent theirs: read as they were.
update es2plus_profile_orders set download_ordered_at = created_at;
