-- Discovery and its bare twin: one GET, the same bytes every time, built once.
-- Environment: BENCH_LUA_DIR, BENCH_PATH, BENCH_API_KEY.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local path = os.getenv("BENCH_PATH")
local key = os.getenv("BENCH_API_KEY")

function init(args)
  reset_counters()
  wrk.method = "GET"
  wrk.path = path
  wrk.headers["Authorization"] = "Bearer " .. key
  prepared = wrk.format()
end

function request()
  return prepared
end
