#!/usr/bin/env bash
# The largest number of targets each engine checks at ≥ HOLD % (99) of the
# intended rate (N / INTERVAL) on its one core, found by stepping N.
#
# For each engine (HAProxy, then gslbkit) it measures one N at a time the
# way run.sh does (a fresh target server with N listeners, the checker
# pinned to CHECK_CPU, WARMUP then WINDOW seconds, probes counted at the
# target): starting at START, it doubles N while the rate holds and halves
# it while it does not, then bisects between the largest N held and the
# smallest N that fell short until they are RES apart. A step whose rate is
# at least HOLD % (99 by default; at most 105 %) holds; one below falls short. A
# measurement that cannot be trusted (the checker died, a control reply was
# lost, a figure is missing, a rate above 105 %) aborts that engine's search:
# its result says ABORTED, never a figure. Every step prints its figures
# (CPU per 1,000 probes, RSS per target, rate, TLS handshakes full and
# resumed, the target server's CPU use: a target near 100 % of its core
# bounds both engines, and then the result measures the target).
#
# Environment: ENGINES="haproxy gslbkit", MODE=https (or http, tcp), HOLD=99, START=500, NMIN=100, NMAX=12000,
# RES=100, WARMUP=5, WINDOW=10, and run.sh's INTERVAL, RATE, PORTS, TPROCS,
# CHECK_CPU, TARGET_CPU, WORKERS, NICE, CHECK_ENV, GP_FLAGS, BASE,
# CONTROL_PORT. With PORTS=0 (one target per port of 127.0.0.1) keep NMAX
# such that the targets' ports (BASE … BASE+N-1) stay below Linux's
# ephemeral range (32768). The interval grows past N = RATE (see run.sh):
# set RATE above NMAX to search at a fixed interval.
# Run as root, like run.sh. Example: MODE=https sudo bench/probe-vs-haproxy/maxn.sh
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODE=${MODE:-https}
HOLD=${HOLD:-99}
START=${START:-500}
NMIN=${NMIN:-100}
NMAX=${NMAX:-12000}
RES=${RES:-100}
WARMUP=${WARMUP:-5}
WINDOW=${WINDOW:-10}
NICE=${NICE--10}
BASE=${BASE:-20000}
CONTROL_PORT=${CONTROL_PORT:-19999}

. "$HERE/lib.sh"
. "$ROOT/bench/lib/stats.sh"

command -v haproxy >/dev/null 2>&1 || { echo "haproxy is not installed (run.sh installs it)" >&2; exit 1; }
echo "building target and gslbprobe..." >&2
build_bins "$WORK"

STEPS="$WORK/steps"
: >"$STEPS"

step() { # ENGINE N: 0 held, 1 fell short, 2 aborted; appends the step to STEPS
  local e=$1 n=$2 out rc=0
  # step runs where set -e does not apply (search tests its status): every
  # failure is checked here.
  if ! start_target "$n" "$MODE"; then
    echo "$e $n ABORTED: the target server did not start" | tee -a "$STEPS" >&2
    return 2
  fi
  if ! start_checker "$e" "$n" "$MODE"; then
    echo "$e $n ABORTED: the checker did not start" | tee -a "$STEPS" >&2
    stop_target
    return 2
  fi
  if ! out=$(sample "$n" "$MODE" "$CPID"); then
    echo "$e $n ABORTED: $out" | tee -a "$STEPS" >&2
    rc=2
  else
    local f=($out)
    if in_range "${f[3]}" "$HOLD" 105; then
      echo "$e $n held $out" | tee -a "$STEPS" >&2
    elif in_range "${f[3]}" 0 "$HOLD"; then
      echo "$e $n short $out" | tee -a "$STEPS" >&2
      rc=1
    else
      echo "$e $n ABORTED: rate ${f[3]} % of the intended rate, above 105 %" | tee -a "$STEPS" >&2
      rc=2
    fi
  fi
  stop_checker "$e"
  stop_target
  return $rc
}

search() { # ENGINE: sets FOUND to "<largest N held> <smallest N short>" ("-" when not found), or "ABORTED <reason>"
  local e=$1 lo=0 hi=0 n=$START rc
  while :; do
    rc=0
    step "$e" "$n" || rc=$?
    if [ "$rc" = 2 ]; then
      FOUND="ABORTED at N=$n: $(awk -v e="$e" -v n="$n" '$1 == e && $2 == n && $3 == "ABORTED:" { $1 = $2 = $3 = ""; sub(/^ +/, ""); r = $0 } END { print r }' "$STEPS")"
      return
    fi
    if [ "$rc" = 0 ]; then lo=$n; else hi=$n; fi
    if [ "$hi" = 0 ]; then
      [ "$n" -ge "$NMAX" ] && { FOUND="$lo -"; return; }
      n=$((n * 2 > NMAX ? NMAX : n * 2))
    elif [ "$lo" = 0 ]; then
      [ "$n" -le "$NMIN" ] && { FOUND="- $hi"; return; }
      n=$((n / 2 < NMIN ? NMIN : n / 2))
    else
      [ $((hi - lo)) -le "$RES" ] && { FOUND="$lo $hi"; return; }
      n=$(((lo + hi) / 2 / RES * RES))
      [ "$n" -le "$lo" ] && n=$((lo + RES))
      [ "$n" -ge "$hi" ] && { FOUND="$lo $hi"; return; }
    fi
  done
}

echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); mode $MODE, held at ≥ $HOLD %, ${WINDOW} s windows${GP_FLAGS:+, gslbprobe $GP_FLAGS}${TLS_MAX:+, TLS at most $TLS_MAX}" | tee "$WORK/header" >&2
declare -A found
for e in ${ENGINES:-haproxy gslbkit}; do
  echo "== $e" >&2
  search "$e"
  found[$e]=$FOUND
done

echo
cat "$WORK/header"
echo "steps: engine N verdict, CPU ms/1000 probes, RSS KiB, B/target, rate %, probes, TLS full, TLS resumed, target CPU %, -1 (no idle RSS measured)"
cat "$STEPS"
echo
echo "largest N held at ≥ $HOLD % of the intended rate ($MODE, one core each):"
for e in ${ENGINES:-haproxy gslbkit}; do
  read -r lo hi rest <<<"${found[$e]}"
  if [ "$lo" = ABORTED ]; then
    printf '%-8s ABORTED %s %s\n' "$e" "$hi" "$rest"
  else
    printf '%-8s %6s   (smallest N short of %s %%: %s; resolution %d)\n' "$e" "$lo" "$HOLD" "$hi" "$RES"
  fi
done
