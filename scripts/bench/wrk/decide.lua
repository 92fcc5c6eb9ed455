-- Moderators' decisions: POST /reports/{id}/resolve (SPAM_CONFIRMED) or /dismiss (false_positive),
-- alternately, each open report decided once. The ids (one a line) are in the file IDS; thread k
-- of THREADS takes the k-th, (k+THREADS)-th, … so no two connections decide the same report.
-- A thread past the end of its share starts it over: those decisions are answered 409 and
-- counted as errors (compare.ts seeds enough open reports for a round).
-- Env: KEY (secret key), IDS, THREADS, BENCH_LUA_DIR (this folder).
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
local threads = 0
function setup(thread)
  thread:set("index", threads)
  threads = threads + 1
end
function init(args)
  ids = {}
  for line in io.lines(os.getenv("IDS")) do
    if line ~= "" then ids[#ids + 1] = line end
  end
  stride = tonumber(os.getenv("THREADS"))
  first = (index or 0) + 1
  pos = first
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
end
function request()
  local n = pos
  pos = pos + stride
  if pos > #ids then pos = first end
  local id = ids[n]
  if n % 2 == 0 then
    return wrk.format(nil, "/sdk/flagstaff/v1/reports/" .. id .. "/resolve", nil, '{"resolutionCode":"SPAM_CONFIRMED"}')
  end
  return wrk.format(nil, "/sdk/flagstaff/v1/reports/" .. id .. "/dismiss", nil, '{"reason":"false_positive"}')
end
