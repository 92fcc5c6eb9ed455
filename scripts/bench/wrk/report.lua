-- POST /projects/{id}/reports with varied bodies: subjects, reporters and content targets
-- cycle through fixed sets, so reports join existing cases and identities as on a busy site.
-- Env: KEY (API key), PROJECT (project id), BENCH_LUA_DIR (this folder).
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
local threads = 0
function setup(thread)
  thread:set("offset", threads * 1000003)
  threads = threads + 1
end
function init(args)
  n = offset or 0
  path = "/sdk/flagstaff/v1/projects/" .. os.getenv("PROJECT") .. "/reports"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
end
local reasons = { "spam", "harassment", "spam", "misinformation", "threats", "other" }
function request()
  n = n + 1
  local body = string.format(
    '{"subject":{"type":"user","externalId":"u-%d","display":{"name":"User %d"}},"reporter":{"type":"user","externalId":"r-%d"},' ..
    '"target":{"contentType":"post","contentExternalId":"p-%d","content":"Buy cheap followers now at example dot com, limited offer!"},' ..
    '"reason":"%s","description":"benchmark report"}',
    n % 20000, n % 20000, n % 50000, n % 100000, reasons[n % #reasons + 1])
  return wrk.format(nil, path, nil, body)
end
