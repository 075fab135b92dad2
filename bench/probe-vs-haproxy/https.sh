#!/usr/bin/env bash
# The HTTPS row: the largest N each engine holds at ≥ HOLD % (95) of the
# intended rate, then CPU per check side by side (run.sh, ROUNDS rounds) at
# HAProxy's largest N and at 1,000 targets.
#
#   sudo bench/probe-vs-haproxy/https.sh
#
# It runs maxn.sh with MODE=https HOLD=95 (START=300 RES=50 NMIN=50 by
# default, both engines; NMAX=4000), reads HAProxy's largest N held, and runs
# NS="<that N> 1000" MODES=https run.sh (WARMUP=4 WINDOW=20 by default).
# When HAProxy holds no N (below NMIN), only the 1,000 row runs. Every
# knob of maxn.sh and run.sh passes through (TLS_MAX=1.2 for TLS 1.2 on both
# sides, GP_FLAGS, ...). Run it on a quiet machine: HAProxy's checks slow
# down first when the machine is loaded, and its largest N with them.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
MODE=https HOLD=${HOLD:-95} START=${START:-300} RES=${RES:-50} NMIN=${NMIN:-50} NMAX=${NMAX:-4000} \
  "$HERE/maxn.sh" | tee "$out"
n=$(awk '$1 == "haproxy" && $2 ~ /^[0-9]+$/ && $3 == "(smallest" { print $2 }' "$out")
ns=1000
if [ -n "$n" ] && [ "$n" != 1000 ]; then
  ns="$n 1000"
fi
echo
echo "== run.sh at N = $ns (HAProxy's largest N held at ≥ ${HOLD:-95} %: ${n:-none})"
NS="$ns" MODES=https WARMUP=${WARMUP:-4} WINDOW=${WINDOW:-20} "$HERE/run.sh"
