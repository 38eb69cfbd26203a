-- The traveller's side (issue 35, contract "Travellers").
--
-- orders.language: the language the traveller's emails and install page use, resolved from the
--   submit's `language` (src/travellers/translate.ts: the tag, its base language, then English) and
--   shown as Order.language. Orders made before this spoke English: the default says so. A domain, as
--   every single-column rule of the tables a purchase writes (migration 0015); the service writes
--   only its supported tags, the check keeps the column to BCP 47's shape.
-- esims.install_token: the unguessable part of the eSIM's install page, /install/{token}. 32 random
--   bytes from PostgreSQL's strong generator (gen_random_uuid's, twice: 244 random bits, built in
--   since PostgreSQL 13, no extension), written as 64 hex digits. Revoking a page replaces its token
--   (src/esims/install-page.ts): the old address stops answering at once. Stored as it is, not
--   hashed: the Esim gives the address back to the partner, whose key already reads the activation
--   code the page shows, so the column exposes nothing the esims row did not hold already. Its rule
--   is a domain too: a table CHECK would be compiled again at every update of esims (a signal's).
create domain language_tag as text
  constraint language_tag_check check (value ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$' and length(value) <= 35);

alter table orders add column language language_tag not null default 'en';

create domain install_token as text
  constraint install_token_check check (value ~ '^[0-9a-f]{64}$');

-- A volatile default: the table is rewritten once, each existing eSIM given its own token.
alter table esims
  add column install_token install_token not null
    default replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');

create unique index esims_install_token_key on esims (install_token);
