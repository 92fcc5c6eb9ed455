-- PUT /projects/{id}/identities/user/{externalId}: 100,000 users per thread, each upserted
-- again and again with a display name and a small metadata patch.
-- Env: KEY, PROJECT, BENCH_LUA_DIR.
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
local threads = 0
function setup(thread)
  thread:set("offset", threads * 100000)
  threads = threads + 1
end
function init(args)
  n = 0
  base = offset or 0
  prefix = "/sdk/flagstaff/v1/projects/" .. os.getenv("PROJECT") .. "/identities/user/id-"
  wrk.method = "PUT"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
end
function request()
  n = n + 1
  local id = base + n % 100000
  local body = string.format('{"display":{"name":"User %d","username":"user_%d"},"metadata":{"plan":"free","seen":%d}}', id, id, n)
  return wrk.format(nil, prefix .. id, nil, body)
end
