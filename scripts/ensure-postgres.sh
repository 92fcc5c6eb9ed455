#!/usr/bin/env bash
# Makes sure the PostgreSQL server programs the PostgreSQL test pass needs are there
# (scripts/pg-cluster.ts runs initdb, pg_ctl and pg_isready from /usr/lib/postgresql/*/bin to start
# a throwaway cluster); `npm test` (scripts/test.sh) and .ci/run call it before the tests.
#
# - FLAGSTAFF_PG_BINDIR set: that folder must hold initdb (nothing is installed).
# - Otherwise initdb under /usr/lib/postgresql/*/bin; when there is none, Debian's `postgresql`
#   package is installed with apt-get, as root or through passwordless sudo (`sudo -n`), saying so.
#   The package's default cluster ("main", a system service) is not created: the tests start
#   their own.
# - When that cannot be done, it stops with a message telling how to install it.
set -euo pipefail

fail() {
  {
    echo "ensure-postgres: $1"
    echo "  The tests' PostgreSQL pass (scripts/test.sh) starts a throwaway PostgreSQL cluster. Install the server with:"
    echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends postgresql"
    echo "  (Debian/Ubuntu; elsewhere install PostgreSQL with your package manager and point FLAGSTAFF_PG_BINDIR"
    echo "  at the folder holding initdb and pg_ctl) and run the tests again, or run the SQLite pass only"
    echo "  with FLAGSTAFF_TEST_ENGINES=sqlite."
  } >&2
  exit 1
}

if [ -n "${FLAGSTAFF_PG_BINDIR:-}" ]; then
  [ -x "$FLAGSTAFF_PG_BINDIR/initdb" ] || fail "FLAGSTAFF_PG_BINDIR=$FLAGSTAFF_PG_BINDIR holds no initdb executable."
  exit 0
fi

find_initdb() {
  local f
  for f in /usr/lib/postgresql/*/bin/initdb; do
    [ -x "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}

find_initdb >/dev/null && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  fail "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin) and this system has no apt-get to install it."
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  fail "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin), and installing it needs root (not root, and sudo asks for a password or is missing)."
fi

echo "ensure-postgres: PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin); installing Debian's postgresql package for the PostgreSQL test pass (${SUDO[*]:-as root} apt-get install postgresql)…"
# No default "main" cluster: postgresql-common reads createcluster.d when the package sets up
# the server; the tests never use it, and on a CI machine it would only be a service to start.
"${SUDO[@]}" mkdir -p /etc/postgresql-common/createcluster.d || fail "could not create /etc/postgresql-common/createcluster.d."
echo "create_main_cluster = false" | "${SUDO[@]}" tee /etc/postgresql-common/createcluster.d/flagstaff-no-main-cluster.conf >/dev/null \
  || fail "could not write /etc/postgresql-common/createcluster.d/flagstaff-no-main-cluster.conf."
"${SUDO[@]}" apt-get update -q || fail "apt-get update failed."
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql || fail "apt-get install postgresql failed."
INITDB="$(find_initdb)" || fail "the postgresql package was installed but there is still no initdb under /usr/lib/postgresql/*/bin."
echo "ensure-postgres: installed $("$(dirname "$INITDB")/postgres" --version 2>/dev/null || echo "$INITDB")"
