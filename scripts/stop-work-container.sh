#!/usr/bin/env bash
# Stops the work container of one session folder, never removes it: `docker stop` keeps its files,
# and the session's next run or terminal starts it again (src/extension/session/workContainer.ts).
#   bash scripts/stop-work-container.sh SESSION
# Only that session's container: labelled expbench.role=work and expbench.session=<the folder's
# name> (as src/core/sandbox/work.ts labels it), and with SESSION/workspace mounted (another
# folder of the same name elsewhere has its own container, left alone). Nothing to stop, no
# Docker, or no such folder: exit 0 with nothing done. scripts/start.sh runs it on exit.
set -euo pipefail
SESSION="${1:?usage: stop-work-container.sh SESSION}"
command -v docker >/dev/null 2>&1 || exit 0
[[ -d "$SESSION/workspace" ]] || exit 0
ws="$(cd "$SESSION/workspace" && pwd)"
real="$(realpath "$ws")"
for id in $(docker ps -q --filter "label=expbench.role=work" --filter "label=expbench.session=$(basename "$(cd "$SESSION" && pwd)")" 2>/dev/null); do
  while IFS= read -r src; do
    if [[ -n "$src" && ( "$src" == "$ws" || "$src" == "$real" ) ]]; then
      echo "== stopping the work container ${id:0:12} of $SESSION (docker stop: its files are kept)"
      docker stop -t 10 "$id" >/dev/null
      break
    fi
  done < <(docker inspect -f '{{range .Mounts}}{{println .Source}}{{end}}' "$id" 2>/dev/null)
done
