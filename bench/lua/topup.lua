-- POST /v1/orders/submit-topup with a new Idempotency-Key on every request. Each line of
-- BENCH_TOPUPS is `<api key> <iccid> <package_id> <external_package_id>`, one eSIM per partner;
-- requests go round the partners, so those in flight hold different wallets: thread i of n takes
-- lines i, i+n, i+2n... (as submit.lua does), round and round. (Each thread used to walk the whole
-- list from its own first line, one line apart: the two threads' requests then met on the same
-- partner, its wallet and its eSIM, and queued behind each other's row locks.)
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local file = os.getenv("BENCH_TOPUPS")
local run_id = os.getenv("BENCH_RUN_ID") or "run"
local END_USER = '"email":"ana@example.com","phone":"+14155550123","first_name":"Ana","last_name":"Lima"'

function init(args)
  reset_counters()
  targets = {}
  local index = 0
  for line in io.lines(file) do
    local key, iccid, package_id, external = line:match("^(%S+) (%S+) (%S+) (%S+)$")
    if key and index % nthreads == tid then
      table.insert(targets, {
        key = "Bearer " .. key,
        body = '{"iccid":"' .. iccid .. '","package_id":"' .. package_id ..
          '","external_package_id":"' .. external .. '",' .. END_USER .. '}',
      })
    end
    if key then index = index + 1 end
  end
  position = 0
  sent = 0
end

function request()
  sent = sent + 1
  position = position % #targets + 1
  local target = targets[position]
  return wrk.format("POST", "/v1/orders/submit-topup", {
    ["Authorization"] = target.key,
    ["Content-Type"] = "application/json",
    ["Idempotency-Key"] = run_id .. "-" .. tid .. "-" .. sent,
  }, target.body)
end

function response(status, headers, body)
  count_status(status)
end
