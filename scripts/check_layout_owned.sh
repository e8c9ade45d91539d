#!/usr/bin/env bash
# The formatter owns the layout: no Python file tracked by git may hold a
# "fmt: skip" or "fmt: off" marker (issue 60). Exits 1 naming each one.
set -euo pipefail
cd "$(dirname "$0")/.."
if git grep -nE "fmt: ?(skip|off)" -- '*.py' ':!scripts/check_layout_owned.sh'; then
  echo "the lines above keep code from ruff format: remove the markers and run 'ruff format'" >&2
  exit 1
fi
