-- Shared by every scenario script: per-thread counters and one machine-readable result line.
-- Loaded with dofile() by the scenario scripts (BENCH_LUA_DIR names this folder).
--
-- wrk itself counts socket errors (connect, read, write, timeout) and responses with a status
-- above 399 (`status`). Scripts that define response() also count every status class themselves,
-- so non-2xx answers are exact; the others rely on wrk's count (these routes never answer 1xx/3xx).

local threads = {}
local next_id = 0
-- wrk has no hook after the last setup(): the harness passes -t again as BENCH_THREADS.
nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

-- Counters a script keeps in its own thread state, summed over threads in done().
counter_names = { "s2xx", "s4xx", "s5xx", "sother", "s402", "s409", "s503", "exhausted" }

function count_status(status)
  if status >= 200 and status < 300 then
    s2xx = s2xx + 1
  elseif status >= 400 and status < 500 then
    s4xx = s4xx + 1
  elseif status >= 500 and status < 600 then
    s5xx = s5xx + 1
  else
    sother = sother + 1
  end
  if status == 402 then s402 = s402 + 1 end
  if status == 409 then s409 = s409 + 1 end
  if status == 503 then s503 = s503 + 1 end
end

function reset_counters()
  for _, name in ipairs(counter_names) do
    _G[name] = 0
  end
end

function done(summary, latency, requests)
  local counts = {}
  for _, name in ipairs(counter_names) do
    local total = 0
    for _, thread in ipairs(threads) do
      total = total + (tonumber(thread:get(name)) or 0)
    end
    table.insert(counts, string.format('"%s":%d', name, total))
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"mean_us":%.1f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,%s}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, table.concat(counts, ",")))
end
