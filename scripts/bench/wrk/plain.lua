-- GET or POST with no key (the bare ceilings). Env: BENCH_LUA_DIR, METHOD (default GET).
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
wrk.method = os.getenv("METHOD") or "GET"
if wrk.method == "POST" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"subject":{"type":"user","externalId":"u-1"},"reason":"spam"}'
end
