-- An invariant checked by the statement whose result it is about, for a write sent without waiting
-- for its answer (src/db/pool.ts deferWrite): not true raises assert_failure (P0004), failing that
-- statement and so its transaction, as the caller's own assert would have had it waited. The
-- message names the invariant, as an assert's does.
create function assert_holds(ok boolean, message text) returns boolean
  language plpgsql volatile
as $$
begin
  if ok is not true then
    raise exception using errcode = 'P0004', message = message;
  end if;
  return true;
end
$$;
