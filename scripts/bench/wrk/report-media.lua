-- report.lua's reports, each carrying one media item's hashes as a platform computes them
-- (SHA-256, MD5 and PDQ with its quality: "hash only", no bytes sent), distinct per report so
-- that each is matched against the project's banks (none matches: a full PDQ scan each time).
-- Env: KEY (API key), PROJECT (project id), BENCH_LUA_DIR (this folder).
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
local threads = 0
function setup(thread)
  thread:set("offset", threads * 1000003)
  threads = threads + 1
end
function init(args)
  n = offset or 0
  x = 12345 + (offset or 0)
  path = "/sdk/flagstaff/v1/projects/" .. os.getenv("PROJECT") .. "/reports"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
end
-- A linear congruential generator small enough for exact double arithmetic (69069 * 2^32 < 2^53).
local function step()
  x = (x * 69069 + 1) % 4294967296
  return x
end
-- One string.format a hash (not one a word and a concat): wrk shares the 2 cores with the
-- server under test, and the client's CPU a request should be nearly the same on both sides.
local function hex4()
  return string.format("%08x%08x%08x%08x", step(), step(), step(), step())
end
local function hex8()
  return string.format("%08x%08x%08x%08x%08x%08x%08x%08x", step(), step(), step(), step(), step(), step(), step(), step())
end
local reasons = { "spam", "harassment", "spam", "misinformation", "threats", "other" }
function request()
  n = n + 1
  local body = string.format(
    '{"subject":{"type":"user","externalId":"u-%d","display":{"name":"User %d"}},"reporter":{"type":"user","externalId":"r-%d"},' ..
    '"target":{"contentType":"post","contentExternalId":"p-%d","content":"Buy cheap followers now at example dot com, limited offer!"},' ..
    '"reason":"%s","description":"benchmark report",' ..
    '"media":[{"sha256":"%s","md5":"%s","pdq":"%s","pdqQuality":90}]}',
    n % 20000, n % 20000, n % 50000, n % 100000, reasons[n % #reasons + 1], hex8(), hex4(), hex8())
  return wrk.format(nil, path, nil, body)
end
