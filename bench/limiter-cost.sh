#!/bin/bash
# What the per-username rate limit costs: CPU time of the service's processes (primary and workers)
# per answered GET Check, all sent as one username, in interleaved rounds of six set-ups:
# WORKERS=1 and 2, each with RATE_LIMIT=0 (no limiter), RATE_LIMIT=1000000 (limiter asked, never
# refusing; memory, or the primary over IPC with WORKERS=2) and the same in Redis (REDIS_URL, default
# redis://127.0.0.1:6379, under a prefix of its own that is deleted afterwards). Redis's own CPU is
# not counted. Needs dist/ (npm run build) and autocannon. ROUNDS (default 3), SECONDS_PER_RUN (6).
# SETUPS narrows the set-ups ("WORKERS RATE_LIMIT -|redis", comma-separated: SETUPS='2 1000000 -').
# BUILDS: checkouts whose dist/ to run, space-separated (default this one), interleaved within each
# round: two builds of the same code but one change measure that change in one run. SCENARIO=soap11
# sends SOAP 1.1 Check envelopes instead of GET Check.
set -u
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-6}
REDIS=${BENCH_REDIS_URL:-redis://127.0.0.1:6379}
SETUPS=${SETUPS:-1 0 -,1 1000000 -,1 1000000 redis,2 0 -,2 1000000 -,2 1000000 redis}
BUILDS=${BUILDS:-$PWD}
SCENARIO=${SCENARIO:-get}
PREFIX="reglookup-limiter-bench-$$:"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/bench.db
DATABASE_URL=sqlite:$DB node dist/cli.js import data/sample.ndjson >/dev/null
PORT=${BENCH_PORT:-18931}
TCK=$(getconf CLK_TCK)
URL="http://127.0.0.1:$PORT/api/reg.asmx/Check?RegistrationNumber=RG11ABC&username=bench"
LOAD=()
if [ "$SCENARIO" = soap11 ]; then
  URL="http://127.0.0.1:$PORT/api/reg.asmx"
  LOAD=(-m POST -H 'Content-Type=text/xml; charset=utf-8' -H 'SOAPAction="http://regcheck.org.uk/Check"' -b
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Check xmlns="http://regcheck.org.uk"><RegistrationNumber>RG11ABC</RegistrationNumber><username>bench</username></Check></soap:Body></soap:Envelope>')
fi
cpu() { local t=0 p; for p in $1 $(pgrep -P "$1"); do set -- $(cut -d' ' -f14,15 /proc/$p/stat); t=$((t + $1 + $2)); done; echo $t; }
IFS=, read -r -a CFGS <<< "$SETUPS"
for round in $(seq 1 "$ROUNDS"); do
  for cfg in "${CFGS[@]}"; do
    for build in $BUILDS; do
      set -- $cfg; w=$1; rl=$2; where=$3
      ru=; [ "$where" = redis ] && ru=$REDIS
      REDIS_URL=$ru REDIS_PREFIX=$PREFIX PORT=$PORT HOST=127.0.0.1 DATABASE_URL=sqlite:$DB LOG_LEVEL=error SAMPLE_DATA=false \
        WORKERS=$w RATE_LIMIT=$rl node --max-semi-space-size=8 "$build/dist/cli.js" serve & pid=$!
      for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
      sleep 1
      c0=$(cpu $pid)
      node_modules/.bin/autocannon -c 20 -d "$SECS" -j "${LOAD[@]}" "$URL" 2>/dev/null > "$TMP/out.json"
      c1=$(cpu $pid)
      node -e "const r=require('$TMP/out.json'); const n=r.requests.total; console.log('round $round | $(basename "$build") | $SCENARIO | WORKERS=$w | RATE_LIMIT=$rl | ' + ($rl === 0 ? 'off' : '$where' === 'redis' ? 'Redis' : $w > 1 ? 'primary (IPC)' : 'memory') + ' | ' + Math.round(r.requests.average) + ' req/s | non-2xx ' + r.non2xx + ' | CPU us/request ' + Math.round(($c1 - $c0) / $TCK * 1e6 / n) + ' | load ' + require('fs').readFileSync('/proc/loadavg','utf8').split(' ')[0])"
      kill $pid; wait $pid 2>/dev/null
    done
  done
done
if command -v redis-cli >/dev/null; then
  redis-cli -u "$REDIS" --scan --pattern "${PREFIX}*" | xargs -r redis-cli -u "$REDIS" del >/dev/null
fi
