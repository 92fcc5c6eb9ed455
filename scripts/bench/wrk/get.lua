-- GET of one fixed path with an API key. Env: KEY, BENCH_LUA_DIR; the path is in the URL.
dofile(os.getenv("BENCH_LUA_DIR") .. "/summary.lua")
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
