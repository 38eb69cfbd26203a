-- POST /v1/orders/submit of prepared carts. Each line of BENCH_CARTS is `<api key> <cart_key>`;
-- thread i of n takes lines i, i+n, i+2n... so each cart is submitted by one thread only.
--   BENCH_LOOP unset: each cart once (purchases). When a thread has used its carts it stops and
--                     counts `exhausted`: the harness sizes the file so that does not happen.
--   BENCH_LOOP=1:     round and round the list (replays of completed carts).
-- Consecutive lines belong to different partners, so requests in flight hold different wallets.
--   BENCH_TRAVELLERS=n: the submit names n travellers (a group order's carts of quantity n), each
--                       with an address of their own, so each gets their own email.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local file = os.getenv("BENCH_CARTS")
local loop = os.getenv("BENCH_LOOP") == "1"
local END_USER = '"email":"ana@example.com","phone":"+14155550123","first_name":"Ana","last_name":"Lima"'
local travellers = tonumber(os.getenv("BENCH_TRAVELLERS") or "0")
if travellers > 0 then
  local named = {}
  for n = 1, travellers do
    table.insert(named, '{"first_name":"T' .. n .. '","last_name":"Lima","email":"traveller' .. n .. '@example.com"}')
  end
  END_USER = END_USER .. ',"travellers":[' .. table.concat(named, ",") .. ']'
end

function init(args)
  reset_counters()
  carts = {}
  local index = 0
  for line in io.lines(file) do
    if index % nthreads == tid then
      local key, cart_key = line:match("^(%S+) (%S+)$")
      if key then
        table.insert(carts, wrk.format("POST", "/v1/orders/submit", {
          ["Authorization"] = "Bearer " .. key,
          ["Content-Type"] = "application/json",
        }, '{"cart_key":"' .. cart_key .. '",' .. END_USER .. '}'))
      end
    end
    index = index + 1
  end
  position = 0
end

function request()
  position = position + 1
  if position > #carts then
    if loop and #carts > 0 then
      position = 1
    else
      exhausted = exhausted + 1
      wrk.thread:stop()
      return wrk.format("GET", "/healthz")
    end
  end
  return carts[position]
end

if not loop then
  function response(status, headers, body)
    count_status(status)
  end
end
