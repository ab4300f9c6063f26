#!/usr/bin/env bash
# Make sure headless Chromium and its driver are installed (the web console's browser tests,
# tests/test_console_browser.py, drive them); installs Debian's chromium and chromium-driver
# packages when missing. Without apt (or root), says what to install and carries on: those
# tests are then skipped.
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
if (have chromium || have chromium-browser) && have chromedriver; then exit 0; fi
if have apt-get; then
  sudo=""
  if [ "$(id -u)" != "0" ]; then
    if have sudo && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo=""; fi
  fi
  if [ "$(id -u)" = "0" ] || [ -n "$sudo" ]; then
    echo "installing chromium and chromium-driver (the console's browser tests)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
    exit 0
  fi
fi
echo "chromium and chromium-driver are not installed: the console's browser tests will be" \
     "skipped (apt install chromium chromium-driver)" >&2
