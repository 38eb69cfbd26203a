-- The search scenario: GETs of the paths in BENCH_PATHS_FILE (one a line), in turn, each thread
-- starting at its own place, so that the searches read many different rows, not one cached page.
-- Environment: BENCH_LUA_DIR, BENCH_PATHS_FILE, BENCH_API_KEY.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local key = os.getenv("BENCH_API_KEY")
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS_FILE")) do
  paths[#paths + 1] = line
end

function init(args)
  reset_counters()
  requests_made = 0
  -- report.lua's setup() numbers the threads (tid): each starts elsewhere in the list.
  offset = tid * 7919
end

function request()
  requests_made = requests_made + 1
  local path = paths[((offset + requests_made) % #paths) + 1]
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. key })
end
