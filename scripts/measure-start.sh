#!/usr/bin/env bash
# Start time and idle memory of the server (README, "Start time and memory"), 3 runs per command:
# milliseconds from process start to the first GET /api/v1/health 200, and RSS 3 s later.
# Uses the environment as is (DATABASE_URL / DATA_DIR...); run once before to apply the migrations.
#   scripts/measure-start.sh                 # compiled (dist/, built if stale) and tsx
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build-if-stale.mjs
measure() {
  local label=$1; shift
  local port=$((39000 + RANDOM % 1000))
  local t0 t1 pid rss
  t0=$(date +%s%N)
  PORT=$port "$@" >/dev/null 2>&1 &
  pid=$!
  until curl -sf -o /dev/null "localhost:$port/api/v1/health"; do
    sleep 0.05
    kill -0 "$pid" 2>/dev/null || { echo "$label: the server exited"; return 1; }
  done
  t1=$(date +%s%N)
  sleep 3
  rss=$(ps -o rss= -p "$pid")
  echo "$label start_ms=$(((t1 - t0) / 1000000)) rss_mb=$((rss / 1024))"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
for _ in 1 2 3; do
  measure compiled node dist/server.js
  measure tsx node --import tsx src/server.ts
done
