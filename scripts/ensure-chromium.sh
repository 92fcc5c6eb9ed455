#!/usr/bin/env bash
# Makes sure the Chromium the dashboard's browser tests drive (test/dashboard.test.ts) is there;
# `npm test` and .ci/run call it before the tests.
#
# - CHROMIUM_PATH set: that executable must exist (nothing is installed).
# - Otherwise /usr/bin/chromium; when it is missing, Debian's `chromium` package is installed
#   with apt-get, as root or through passwordless sudo (`sudo -n`), saying so.
# - When that cannot be done, it stops with a message telling how to install it.
set -euo pipefail

fail() {
  {
    echo "ensure-chromium: $1"
    echo "  The dashboard's browser tests (test/dashboard.test.ts) drive a headless Chromium. Install it with:"
    echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium"
    echo "  (Debian/Ubuntu; elsewhere install Chromium with your package manager) and run the tests again,"
    echo "  or point CHROMIUM_PATH at a Chromium or Chrome executable."
  } >&2
  exit 1
}

if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || fail "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file."
  exit 0
fi

CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  fail "Chromium is not installed at $CHROMIUM and this system has no apt-get to install it."
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  fail "Chromium is not installed at $CHROMIUM, and installing it needs root (not root, and sudo asks for a password or is missing)."
fi

echo "ensure-chromium: Chromium is not installed at $CHROMIUM; installing Debian's chromium package for the browser tests (${SUDO[*]:-as root} apt-get install chromium)…"
"${SUDO[@]}" apt-get update -q || fail "apt-get update failed."
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium || fail "apt-get install chromium failed."
[ -x "$CHROMIUM" ] || fail "the chromium package was installed but $CHROMIUM is still missing."
echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
