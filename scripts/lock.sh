#!/usr/bin/env bash
# Regenerate the hashed locks from the dependencies declared in pyproject.toml:
#   requirements.txt      runtime ([project] dependencies)
#   requirements-dev.txt  runtime + the `dev` extra, constrained to requirements.txt
# Versions already in the locks are kept unless pyproject.toml rules them out.
# Extra arguments go to pip-compile, e.g.
#   bash scripts/lock.sh --upgrade-package requests   # move one package
#   bash scripts/lock.sh --upgrade                    # newest compatible everything
# Needs pip-tools in .venv (it is in the dev extra: make install).
set -euo pipefail
cd "$(dirname "$0")/.."

export CUSTOM_COMPILE_COMMAND="make lock"
COMPILE=(
  .venv/bin/pip-compile --quiet --resolver=backtracking
  --generate-hashes --strip-extras --allow-unsafe
  --no-emit-index-url --no-emit-find-links
)

"${COMPILE[@]}" "$@" --output-file requirements.txt pyproject.toml
"${COMPILE[@]}" "$@" --extra dev --constraint requirements.txt \
  --output-file requirements-dev.txt pyproject.toml
