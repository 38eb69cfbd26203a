-- Discovery with price lists: one GET, its API key going round a list of partners, so answers of
-- different price lists are asked for one after the other. Each request is built once per key.
-- Environment: BENCH_LUA_DIR, BENCH_PATH, BENCH_KEYS (a file, one API key a line).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local path = os.getenv("BENCH_PATH")
local file = os.getenv("BENCH_KEYS")

function init(args)
  reset_counters()
  prepared = {}
  for key in io.lines(file) do
    if key ~= "" then
      table.insert(prepared, wrk.format("GET", path, { ["Authorization"] = "Bearer " .. key }))
    end
  end
  -- Threads start at different keys, so the two do not ask for the same list at the same moment.
  position = tid % #prepared
end

function request()
  position = position % #prepared + 1
  return prepared[position]
end
