#!/usr/bin/env bash
# Side-by-side health-check cost of HAProxy and gslbkit's probe.Monitor.
#
# For each N (targets) and mode (http, tcp, https) it starts the Go target
# servers (TPROCS processes, 2; TLS 1.3 for https), which listen on PORTS
# (4) ports of the wildcard address, the targets being PORTS per loopback
# address on 127.1.0.0 on (PORTS=0: N ports of 127.0.0.1, one target each,
# as before 50,000-target runs), then runs HAProxy and then gslbprobe (a
# small program around probe.Monitor) against them, one after the other,
# each checking every target once per interval over a new connection: the
# interval is INTERVAL seconds (1), or N / RATE seconds when that is longer
# (RATE=10000 checks a second: 5 s at 50,000 targets, 10 s at 100,000). For
# each engine it measures, over a window after a warm-up of WARMUP seconds
# plus one interval:
#   - CPU time (utime + stime from /proc/PID/stat) per 1,000 probes, the
#     probes being those counted at the target server;
#   - resident memory (VmRSS) at the end of the window, in total and per
#     target, and per target without the fixed cost: (RSS − the engine's
#     RSS with no targets, measured each round) ÷ N;
#   - the achieved probe rate at the target, as a percentage of N / interval
#     (HTTP and HTTPS: requests answered; TCP: SYNs received, counted with a
#     packet socket, since HAProxy's connect-only checks abort the handshake
#     with a RST and never reach accept(); needs root);
#   - HTTPS: the TLS handshakes the target completed, full and resumed;
#   - the target server's own CPU use (a saturated target slows both).
# It repeats the whole run ROUNDS times and prints, per row, the median of
# the rounds with min and max, and the ratios gslbkit / HAProxy (median, min,
# max over the rounds). A measurement that cannot be trusted aborts its row
# with a message instead of printing a figure: a lost or garbled control
# reply from the target server, a checker that died, or an achieved rate
# outside 95–105 % of the intended rate (then the engine did not do the work
# being priced).
#
# Environment: ROUNDS=3, NS="1000 5000 10000" (add 50000 100000), MODES="http tcp" (add https),
# WARMUP=5, WINDOW=20 (seconds), INTERVAL=1, RATE=10000, PORTS=4, TPROCS=2,
# CHECK_CPU=1 and TARGET_CPU=0 (taskset cores; empty to not pin), WORKERS
# (Monitor concurrency; default max(256, checks a second / 5), enough at up
# to 200 ms latency), NICE=-10 (priority of the
# target and the checkers when root; empty to leave it), CHECK_ENV (extra
# environment for gslbprobe only, e.g. "GOMEMLIMIT=48MiB"; empty by default),
# GP_FLAGS (extra gslbprobe flags, e.g. "-no-resume" or "-curves ''"),
# BASE=20000 and CONTROL_PORT=19999 (the targets' first port and the target
# servers' control port, on 127.0.0.1, 127.0.0.2, … one per process;
# HAProxy's unused listener takes 127.0.0.1:CONTROL_PORT - 1). The soft
# open-file limit is raised to the hard one.
# Needs root to install haproxy with apt if it is absent; see README.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3}
NS=${NS:-"1000 5000 10000"}
MODES=${MODES:-"http tcp"}
WARMUP=${WARMUP:-5}
WINDOW=${WINDOW:-20}
NICE=${NICE--10}
BASE=${BASE:-20000}
CONTROL_PORT=${CONTROL_PORT:-19999}

. "$HERE/lib.sh"
. "$ROOT/bench/lib/stats.sh"

if ! command -v haproxy >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "haproxy is not installed and this is not root: apt-get install haproxy first" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends haproxy
fi
HAPROXY_VERSION=$(haproxy -v 2>&1 | awk 'NR == 1 {print $3}')
case "$HAPROXY_VERSION" in
  2.6*) ;;
  *) echo "note: HAProxy $HAPROXY_VERSION, the reference figures were taken with 2.6" >&2 ;;
esac

echo "building target and gslbprobe..." >&2
build_bins "$WORK"
[ -n "$CHECK_ENV" ] && echo "gslbprobe runs with: $CHECK_ENV" >&2

RESULTS="$WORK/results"
: >"$RESULTS"

abort_row() { # ROUND ENGINE N MODE REASON: the row prints no figure
  echo "ABORT $1 $2 $3 $4 $5" >>"$RESULTS"
  echo "   row $2 N=$3 $4 aborted (round $1): $5" >&2
}

measure() { # ROUND ENGINE N MODE PID RSS0: one row of RESULTS, or an ABORT line
  local round=$1 engine=$2 n=$3 mode=$4 pid=$5 rss0=$6 out
  if ! out=$(sample "$n" "$mode" "$pid" "$rss0"); then
    abort_row "$round" "$engine" "$n" "$mode" "$out"
    return
  fi
  local f=($out)
  if ! in_range "${f[3]}" 95 105; then
    abort_row "$round" "$engine" "$n" "$mode" "rate ${f[3]} % of the intended rate, outside 95–105 %"
    echo "   (for the log only, not a result: $out)" >&2
  else
    echo "$round $engine $n $mode $out" | tee -a "$RESULTS" >&2
  fi
}

layout="one target per port of 127.0.0.1"
[ "$PORTS" -gt 0 ] && layout="$PORTS targets per loopback address, $TPROCS target processes"
echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds; $layout; interval max(${INTERVAL} s, N / $RATE s)${GP_FLAGS:+; gslbprobe $GP_FLAGS}${CHECK_ENV:+; gslbprobe env $CHECK_ENV}${TLS_MAX:+; TLS at most $TLS_MAX}" | tee "$WORK/header" >&2
declare -A RSS0
for round in $(seq "$ROUNDS"); do
  echo "=== round $round of $ROUNDS" >&2
  for engine in haproxy gslbkit; do
    if RSS0[$engine]=$(rss_idle "$engine" http); then
      echo "IDLE $round $engine ${RSS0[$engine]}" | tee -a "$RESULTS" >&2
    else
      echo "   $engine with no targets: ${RSS0[$engine]}; no memory per target without the fixed cost this round" >&2
      RSS0[$engine]=-1
    fi
  done
  for n in $NS; do
    for mode in $MODES; do
      echo "== N=$n $mode (interval $(iv_ms "$n") ms): starting the target servers" >&2
      if ! start_target "$n" "$mode"; then
        for engine in haproxy gslbkit; do abort_row "$round" "$engine" "$n" "$mode" "the target servers did not start"; done
        stop_target
        continue
      fi
      for engine in haproxy gslbkit; do
        echo "-- N=$n $mode: $engine" >&2
        if ! start_checker "$engine" "$n" "$mode"; then
          abort_row "$round" "$engine" "$n" "$mode" "the checker did not start"
          stop_checker "$engine"
          continue
        fi
        measure "$round" "$engine" "$n" "$mode" "$CPID" "${RSS0[$engine]}"
        stop_checker "$engine"
      done
      stop_target
    done
  done
done

echo
cat "$WORK/header"
echo "median of $ROUNDS rounds (min–max); a row with an aborted round shows why instead of figures"
echo "RSS with no targets, KiB: $(for e in haproxy gslbkit; do printf '%s %s  ' "$e" "$(awk -v e="$e" '$1 == "IDLE" && $3 == e { print $4 }' "$RESULTS" | mmm | fmt_mmm %.0f)"; done)"
printf '%-8s %6s %-5s %24s %26s %20s %20s %24s %14s\n' engine N mode "CPU ms/1000 probes" "RSS KiB" "B/target" "(RSS−idle) B/target" "rate %" "target CPU %"
for n in $NS; do for mode in $MODES; do for e in haproxy gslbkit; do
  why=$(awk -v e="$e" -v n="$n" -v m="$mode" '$1 == "ABORT" && $3 == e && $4 == n && $5 == m { $1 = ""; $3 = ""; $4 = ""; $5 = ""; sub(/^ +/, ""); gsub(/ +/, " "); print "round " $0; exit }' "$RESULTS")
  if [ -n "$why" ]; then
    printf '%-8s %6d %-5s ABORTED: %s\n' "$e" "$n" "$mode" "$why"
    continue
  fi
  col() { awk -v e="$e" -v n="$n" -v m="$mode" -v c="$1" '$1 != "IDLE" && $2 == e && $3 == n && $4 == m && $c >= 0 { print $c }' "$RESULTS" | mmm | fmt_mmm "$2"; }
  printf '%-8s %6d %-5s %24s %26s %20s %20s %24s %14s\n' "$e" "$n" "$mode" "$(col 5 %.1f)" "$(col 6 %.0f)" "$(col 7 %.0f)" "$(col 13 %.0f)" "$(col 8 %.2f)" "$(col 12 %.0f)"
done; done; done
if [[ " $MODES " == *" https "* ]]; then
  echo
  echo "TLS handshakes counted at the target in the window: full and resumed (median, min–max)"
  printf '%-8s %6s %26s %26s\n' engine N "full" "resumed"
  for n in $NS; do for e in haproxy gslbkit; do
    if grep -q "^ABORT [0-9]* $e $n https " "$RESULTS"; then
      printf '%-8s %6d %s\n' "$e" "$n" "ABORTED (see above)"
      continue
    fi
    hs() { awk -v e="$e" -v n="$n" -v c="$1" '$2 == e && $3 == n && $4 == "https" { print $c }' "$RESULTS" | mmm | fmt_mmm %.0f; }
    printf '%-8s %6d %26s %26s\n' "$e" "$n" "$(hs 10)" "$(hs 11)"
  done; done
fi
echo
printf '%6s %-5s %28s %28s %28s\n' N mode "CPU gslbkit/HAProxy" "RSS gslbkit/HAProxy" "(RSS−idle) gslbkit/HAProxy"
for n in $NS; do for mode in $MODES; do
  if grep -q "^ABORT [0-9]* [a-z]* $n $mode " "$RESULTS"; then
    printf '%6d %-5s %s\n' "$n" "$mode" "ABORTED (see above)"
    continue
  fi
  ratio() { awk -v n="$n" -v m="$mode" -v c="$1" '$1 != "IDLE" && $3 == n && $4 == m { v[$1, $2] = $c; r[$1] = 1 }
    END { for (k in r) if (v[k, "haproxy"] > 0 && v[k, "gslbkit"] >= 0) print v[k, "gslbkit"] / v[k, "haproxy"] }' "$RESULTS" | mmm | fmt_mmm %.2f; }
  printf '%6d %-5s %28s %28s %28s\n' "$n" "$mode" "$(ratio 5)" "$(ratio 6)" "$(ratio 13)"
done; done
if [ "$(wc -w <<<"$NS")" -gt 1 ]; then
  echo
  echo "RSS per added target between consecutive N: (median RSS at N2 − median RSS at N1) / (N2 − N1), bytes"
  printf '%-8s %-5s %14s %10s\n' engine mode "N1 → N2" "B/target"
  for mode in $MODES; do for e in haproxy gslbkit; do
    prev="" prss=""
    for n in $NS; do
      if grep -q "^ABORT [0-9]* $e $n $mode " "$RESULTS"; then
        rss=""
      else
        rss=$(awk -v e="$e" -v n="$n" -v m="$mode" '$2 == e && $3 == n && $4 == m { print $6 }' "$RESULTS" | mmm | awk '{print $1}')
      fi
      if [ -n "$prev" ]; then
        if [ -n "$rss" ] && [ -n "$prss" ]; then
          printf '%-8s %-5s %14s %10.0f\n' "$e" "$mode" "$prev → $n" "$(awk -v a="$prss" -v b="$rss" -v n1="$prev" -v n2="$n" 'BEGIN {print (b - a) * 1024 / (n2 - n1)}')"
        else
          printf '%-8s %-5s %14s %10s\n' "$e" "$mode" "$prev → $n" "ABORTED"
        fi
      fi
      prev=$n prss=$rss
    done
  done; done
fi
