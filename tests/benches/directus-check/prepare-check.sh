#!/usr/bin/env bash
# tests/benches/directus-check/prepare-check.sh [WORK]: reset the Directus sandbox and add the answer bookmarks (ids 3-7) that
# the view-state tasks' "answer" pages name, so that `apps-bench --check` can open them. Starts
# a server of its own on a free loopback port for the while and stops it (by its pid).
# `scripts/directus-site reset` removes the bookmarks again (every bench run resets first).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); work=${1:-$here/../../../target/apps}; dir=$work/directus
script=$here/../../../scripts/directus-site
"$script" reset "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$script" serve "$dir" "$port" >>"$dir/prepare-server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/server/ping" >/dev/null && break; sleep 0.5; done
ids=$(node "$here/bookmarks.mjs" "http://127.0.0.1:$port")
echo "bookmarks: $ids"
[ "$ids" = '{"bob-drafts":3,"garden-sold-out":4,"by-price":5,"alice-guides":6,"garden-in-stock-under-15":7}' ] \
  || { echo "unexpected bookmark ids (tasks.json names 3-7)" >&2; exit 1; }
