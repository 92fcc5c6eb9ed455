#!/usr/bin/env bash
# Makes sure the ffmpeg that samples videos' frames (docs/media.md, "Video") is there for the
# tests (test/media-video-frames.test.ts, test/media-video.test.ts); `npm test` and .ci/run call
# it before the tests. A server without ffmpeg still runs: videos are then matched by SHA-256 and
# MD5 only.
#
# - FLAGSTAFF_FFMPEG_PATH set: that executable must exist (nothing is installed).
# - Otherwise `ffmpeg` on the PATH; when it is missing, Debian's `ffmpeg` package is installed
#   with apt-get, as root or through passwordless sudo (`sudo -n`), saying so.
# - When that cannot be done, it stops with a message telling how to install it.
set -euo pipefail

fail() {
  {
    echo "ensure-ffmpeg: $1"
    echo "  The video tests (test/media-video*.test.ts) run Debian's ffmpeg. Install it with:"
    echo "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ffmpeg"
    echo "  (Debian/Ubuntu; elsewhere install ffmpeg with your package manager) and run the tests again,"
    echo "  or point FLAGSTAFF_FFMPEG_PATH at an ffmpeg executable."
  } >&2
  exit 1
}

if [ -n "${FLAGSTAFF_FFMPEG_PATH:-}" ]; then
  [ -f "$FLAGSTAFF_FFMPEG_PATH" ] && [ -x "$FLAGSTAFF_FFMPEG_PATH" ] || fail "FLAGSTAFF_FFMPEG_PATH=$FLAGSTAFF_FFMPEG_PATH is not an executable file."
  exit 0
fi

command -v ffmpeg >/dev/null 2>&1 && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  fail "ffmpeg is not on the PATH and this system has no apt-get to install it."
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  fail "ffmpeg is not on the PATH, and installing it needs root (not root, and sudo asks for a password or is missing)."
fi

echo "ensure-ffmpeg: ffmpeg is not on the PATH; installing Debian's ffmpeg package for the video tests (${SUDO[*]:-as root} apt-get install ffmpeg)…"
"${SUDO[@]}" apt-get update -q || fail "apt-get update failed."
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg || fail "apt-get install ffmpeg failed."
command -v ffmpeg >/dev/null 2>&1 || fail "the ffmpeg package was installed but ffmpeg is still not on the PATH."
echo "ensure-ffmpeg: installed $(ffmpeg -version 2>/dev/null | head -1 || echo ffmpeg)"
