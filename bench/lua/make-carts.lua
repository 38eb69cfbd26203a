-- Setup, not a measurement: POST /v1/orders/cart, going round the partners of BENCH_PARTNERS
-- (one API key a line), until this thread has sent its share of BENCH_COUNT carts. The harness
-- then reads the new carts from the database, with their partners. BENCH_QUANTITY (unset: 1) is
-- the cart's `quantity`: a group order's carts.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local file = os.getenv("BENCH_PARTNERS")
local count = tonumber(os.getenv("BENCH_COUNT"))
local quantity = os.getenv("BENCH_QUANTITY")
local body = '{"package_id":"' .. os.getenv("BENCH_PACKAGE") .. '"'
  .. (quantity and (',"quantity":' .. quantity) or '') .. '}'

function init(args)
  reset_counters()
  requests = {}
  for key in io.lines(file) do
    table.insert(requests, wrk.format("POST", "/v1/orders/cart", {
      ["Authorization"] = "Bearer " .. key,
      ["Content-Type"] = "application/json",
    }, body))
  end
  -- This thread's share, and a start in the partner list of its own.
  quota = math.floor(count / nthreads) + ((tid < count % nthreads) and 1 or 0)
  position = tid
  sent = 0
end

function request()
  if sent >= quota then
    wrk.thread:stop()
  end
  sent = sent + 1
  position = position % #requests + 1
  return requests[position]
end

function response(status, headers, body)
  count_status(status)
end
