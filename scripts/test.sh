#!/usr/bin/env bash
# The README's test command (`npm test`): type-checks, then runs the whole suite twice, on each
# storage engine:
#
#   == SQLite ==      bun test --timeout 30000 [args]
#   == PostgreSQL ==  the same, under scripts/pg-cluster.ts (a throwaway cluster; the tests see its
#                     admin URL as FLAGSTAFF_TEST_POSTGRES_URL and give each server a database)
#
# Arguments are passed to both `bun test` runs: `npm test -- test/reports.test.ts` runs one file
# on both engines. It fails when either pass fails (both run regardless).
#
# The two passes run at once (FLAGSTAFF_TEST_PASSES_AT_ONCE=0: one after the other), the
# PostgreSQL pass's output printed whole after the SQLite pass's.
#
# The browser tests (the files that import test/helpers/browser.ts: the dashboard in Chromium) run
# in the SQLite pass only when no file is named: they test the dashboard, which speaks tRPC to a
# server whose every procedure the other files test on both engines, and they are half of the
# suite's time. Naming a file runs it on both; FLAGSTAFF_TEST_BROWSER_ON_POSTGRES=1 runs them all.
#
# - FLAGSTAFF_TEST_ENGINES=sqlite or =postgres (or "sqlite,postgres", the default) picks the passes.
# - FLAGSTAFF_TEST_POSTGRES_URL set: the PostgreSQL pass uses that server (a superuser URL, e.g.
#   postgres://postgres@127.0.0.1:5432/postgres) instead of starting a throwaway cluster.
# - FLAGSTAFF_SKIP_TYPECHECK=1 skips `tsc --noEmit`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

# Which engine a pass runs on is the harness's choice alone: not a database from the shell.
EXTERNAL_PG_URL="${FLAGSTAFF_TEST_POSTGRES_URL:-}"
unset FLAGSTAFF_DATABASE_URL FLAGSTAFF_TEST_POSTGRES_URL

run_sqlite=false
run_postgres=false
IFS=', ' read -r -a ENGINES <<<"${FLAGSTAFF_TEST_ENGINES:-sqlite,postgres}"
for engine in "${ENGINES[@]}"; do
  case "$engine" in
    sqlite) run_sqlite=true ;;
    postgres | postgresql | pg) run_postgres=true ;;
    "") ;;
    *)
      echo "scripts/test.sh: FLAGSTAFF_TEST_ENGINES=$FLAGSTAFF_TEST_ENGINES: unknown engine '$engine' (sqlite, postgres)" >&2
      exit 2
      ;;
  esac
done
if ! $run_sqlite && ! $run_postgres; then
  echo "scripts/test.sh: FLAGSTAFF_TEST_ENGINES=${FLAGSTAFF_TEST_ENGINES:-} names no engine (sqlite, postgres)" >&2
  exit 2
fi

bash scripts/ensure-chromium.sh
bash scripts/ensure-ffmpeg.sh
if $run_postgres && [ -z "$EXTERNAL_PG_URL" ]; then
  bash scripts/ensure-postgres.sh
fi

if [ "${FLAGSTAFF_SKIP_TYPECHECK:-}" != "1" ]; then
  tsc --noEmit
fi

status=0
summary=()

# The PostgreSQL pass's command, and whether it leaves the browser tests to the SQLite pass.
pg_run=()
if $run_postgres; then
  if [ -n "$EXTERNAL_PG_URL" ]; then
    pg_title="== PostgreSQL == (FLAGSTAFF_TEST_POSTGRES_URL: the server given)"
    pg_run=(env "FLAGSTAFF_TEST_POSTGRES_URL=$EXTERNAL_PG_URL" bun test --timeout 30000 "$@")
  else
    pg_title="== PostgreSQL =="
    pg_run=(bun scripts/pg-cluster.ts -- bun test --timeout 30000 "$@")
  fi
  named_files=false
  for arg in "$@"; do
    if [ -e "$arg" ] || [[ "$arg" == *.ts ]]; then named_files=true; fi
  done
  if ! $named_files && [ "${FLAGSTAFF_TEST_BROWSER_ON_POSTGRES:-}" != "1" ]; then
    mapfile -t pg_files < <(grep -L -r --include='*.test.ts' 'helpers/browser' test | sort)
    pg_title="$pg_title (the browser tests run in the SQLite pass: ${#pg_files[@]} files here)"
    pg_run+=("${pg_files[@]}")
  fi
fi

# Each pass's output is also kept, so the summary at the very end can name the failed tests of
# both: CI shows only the tail of a long run, where the SQLite pass's own list is long gone.
sqlite_log="$(mktemp -t flagstaff-sqlite-pass.XXXXXX)"
trap 'rm -f "$sqlite_log"' EXIT

run_sqlite_pass() {
  echo
  echo "== SQLite =="
  if bun test --timeout 30000 "$@" 2>&1 | tee "$sqlite_log"; then
    summary+=("SQLite: passed")
  else
    rc=$?
    status=1
    summary+=("SQLite: FAILED (exit $rc)")
    failed_lines "SQLite" "$sqlite_log"
  fi
}

# The failed tests of a pass, its unhandled errors and its last count lines, for the summary.
failed_lines() {
  local name="$1" log="$2" line
  while IFS= read -r line; do
    summary+=("  $name $line")
  done < <(grep -E '^\(fail\)|^error: |Unhandled error|^ *[0-9]+ (fail|pass)$|^Ran [0-9]+ tests' "$log" | sort -u | head -40)
}

if $run_sqlite && $run_postgres && [ "${FLAGSTAFF_TEST_PASSES_AT_ONCE:-1}" != "0" ]; then
  # Both passes at once: much of a pass is waiting (servers, timers, Chromium), so together they
  # take far less than one after the other. The SQLite pass prints as it goes; the PostgreSQL
  # pass's output is kept and printed whole when it ends. FLAGSTAFF_TEST_PASSES_AT_ONCE=0 runs
  # them one after the other.
  pg_log="$(mktemp -t flagstaff-pg-pass.XXXXXX)"
  "${pg_run[@]}" >"$pg_log" 2>&1 &
  pg_pid=$!
  run_sqlite_pass "$@"
  if wait "$pg_pid"; then pg_rc=0; else pg_rc=$?; fi
  echo
  echo "$pg_title"
  cat "$pg_log"
  if [ "$pg_rc" -eq 0 ]; then
    summary+=("PostgreSQL: passed")
  else
    status=1
    summary+=("PostgreSQL: FAILED (exit $pg_rc)")
    failed_lines "PostgreSQL" "$pg_log"
  fi
  rm -f "$pg_log"
else
  if $run_sqlite; then run_sqlite_pass "$@"; fi
  if $run_postgres; then
    echo
    echo "$pg_title"
    if "${pg_run[@]}"; then
      summary+=("PostgreSQL: passed")
    else
      rc=$?
      status=1
      summary+=("PostgreSQL: FAILED (exit $rc)")
    fi
  fi
fi

echo
echo "== Summary =="
printf '%s\n' "${summary[@]}"
exit "$status"
