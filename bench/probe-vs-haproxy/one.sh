#!/usr/bin/env bash
# One gslbprobe measurement without HAProxy, for iterating on memory and CPU:
#
#   one.sh N MODE SECONDS [gslbprobe flags...]
#
# Starts the target server with N listeners on 127.0.0.1, one target each
# (on TARGET_CPU, core 0), runs
# gslbprobe against them (on CHECK_CPU, core 1; 1 s interval and timeout),
# samples its CPU time after WARMUP (5) seconds and again SECONDS later, reads
# its VmRSS, stops it with SIGINT and prints its report (the runtime's memory
# as sampled while it ran, the Monitor's totals). The CPU figure counts probes
# as N × SECONDS (the intended rate), not at the target: see gslbprobe's probe
# count for what was achieved.
#
# Environment: CHECK_ENV (environment for gslbprobe only, e.g.
# "GOMEMLIMIT=48MiB"), BIN (a directory holding gslbprobe and target already
# built; default: build them into a temporary directory), BASE=5000 and
# CONTROL_PORT=4999 (other than run.sh's, so both can run at once), WARMUP=5.
# MODE https serves TLS and has gslbprobe trust the target's CA.
# Example: bench/probe-vs-haproxy/one.sh 10000 http 10 -workers 2000
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 N MODE SECONDS [gslbprobe flags...]" >&2
  exit 2
fi
n=$1 mode=$2 secs=$3
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BASE=${BASE:-5000}
CONTROL_PORT=${CONTROL_PORT:-4999}
WARMUP=${WARMUP:-5}

. "$HERE/lib.sh"

BIN=${BIN:-}
if [ -z "$BIN" ]; then
  BIN=$WORK
  build_bins "$BIN"
fi

tls=() ca=()
[ "$mode" = https ] && tls=(-tls -ca "$WORK/ca.pem") ca=(-ca "$WORK/ca.pem")
"${PIN_TARGET[@]}" "$BIN/target" -ports "$n" -base "$BASE" -control "127.0.0.1:$CONTROL_PORT" "${tls[@]}" >"$WORK/target.out" 2>&1 &
PIDS+=($!)
wait_ready "$WORK/target.out" "${PIDS[0]}"
"${PIN_CHECK[@]}" "${GP_ENV[@]}" "$BIN/gslbprobe" -n "$n" -base "$BASE" -mode "$mode" \
  -interval 1s -timeout 1s "${ca[@]}" "$@" >"$WORK/gslbprobe.out" 2>&1 &
gp=$!
PIDS+=("$gp")
wait_ready "$WORK/gslbprobe.out" "$gp"
sleep "$WARMUP"
a=$(cpu_ticks "$gp")
sleep "$secs"
b=$(cpu_ticks "$gp")
rss=$(rss_kib "$gp")
kill -INT "$gp"
wait "$gp" || true
awk -v n="$n" -v s="$secs" -v d=$((b - a)) -v hz="$CLK_TCK" -v rss="$rss" -v env="$CHECK_ENV" 'BEGIN {
  printf "N=%d %s: RSS %d KiB, %.0f B/target; CPU %.1f ms per 1,000 intended probes\n",
    n, (env == "" ? "default GC" : env), rss, rss * 1024 / n, d * 1000 / hz / (n * s / 1000)
}'
grep -v '^ready$' "$WORK/gslbprobe.out" || true
