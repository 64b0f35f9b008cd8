#!/usr/bin/env bash
# The main job on a fresh machine: install queuetop in .venv and open the dashboard on a demo queue
# (an embedded SQLite file with live load). Extra arguments go to `queuetop demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/queuetop demo "$@"
