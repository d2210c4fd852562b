#!/bin/bash
# What the per-username rate limit costs: CPU time of the service's processes (primary and workers)
# per answered GET Check, all sent as one username, in interleaved rounds of six set-ups:
# WORKERS=1 and 2, each with RATE_LIMIT=0 (no limiter), RATE_LIMIT=1000000 (limiter asked, never
# refusing; memory, or the primary over IPC with WORKERS=2) and the same in Redis (REDIS_URL, default
# redis://127.0.0.1:6379, under a prefix of its own that is deleted afterwards). Redis's own CPU is
# not counted. Needs dist/ (npm run build) and autocannon. ROUNDS (default 3), SECONDS_PER_RUN (6).
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-6}
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379}
PREFIX="reglookup-limiter-bench-$$:"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/bench.db
DATABASE_URL=sqlite:$DB node dist/cli.js import data/sample.ndjson >/dev/null
PORT=${BENCH_PORT:-18931}
TCK=$(getconf CLK_TCK)
cpu() { local t=0 p; for p in $1 $(pgrep -P "$1"); do set -- $(cut -d' ' -f14,15 /proc/$p/stat); t=$((t + $1 + $2)); done; echo $t; }
for round in $(seq 1 "$ROUNDS"); do
  for cfg in "1 0 -" "1 1000000 -" "1 1000000 redis" "2 0 -" "2 1000000 -" "2 1000000 redis"; do
    set -- $cfg; w=$1; rl=$2; where=$3
    ru=; [ "$where" = redis ] && ru=$REDIS
    REDIS_URL=$ru REDIS_PREFIX=$PREFIX PORT=$PORT HOST=127.0.0.1 DATABASE_URL=sqlite:$DB LOG_LEVEL=error SAMPLE_DATA=false \
      WORKERS=$w RATE_LIMIT=$rl node --max-semi-space-size=8 dist/cli.js serve & pid=$!
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
    sleep 1
    c0=$(cpu $pid)
    node_modules/.bin/autocannon -c 20 -d "$SECS" -j "http://127.0.0.1:$PORT/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=bench" 2>/dev/null > "$TMP/out.json"
    c1=$(cpu $pid)
    node -e "const r=require('$TMP/out.json'); const n=r.requests.total; console.log('round $round | WORKERS=$w | RATE_LIMIT=$rl | ' + ($rl === 0 ? 'off' : '$where' === 'redis' ? 'Redis' : $w > 1 ? 'primary (IPC)' : 'memory') + ' | ' + Math.round(r.requests.average) + ' req/s | non-2xx ' + r.non2xx + ' | CPU us/request ' + Math.round(($c1 - $c0) / $TCK * 1e6 / n))"
    kill $pid; wait $pid 2>/dev/null
  done
done
if command -v redis-cli >/dev/null; then
  redis-cli -u "$REDIS" --scan --pattern "${PREFIX}*" | xargs -r redis-cli -u "$REDIS" del >/dev/null
fi
