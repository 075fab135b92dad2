#!/usr/bin/env bash
# Side-by-side health-check cost of HAProxy and gslbkit's probe.Monitor.
#
# For each N (targets) and mode (http, tcp) it starts the Go target server
# with N loopback listeners, then runs HAProxy and then gslbprobe (a small
# program around probe.Monitor) against them, one after the other, each
# checking every target once per INTERVAL seconds over a new connection. For
# each engine it measures, over a window after a warm-up:
#   - CPU time (utime + stime from /proc/PID/stat) per 1,000 probes, the
#     probes being those counted at the target server;
#   - resident memory (VmRSS) at the end of the window, in total and per target;
#   - the achieved probe rate at the target, as a percentage of N / INTERVAL
#     (HTTP: requests answered; TCP: SYNs received, counted with a packet
#     socket, since HAProxy's connect-only checks abort the handshake with a
#     RST and never reach accept(); needs root).
# It repeats the whole run ROUNDS times and prints, per row, the median of
# the rounds with min and max, and the ratios gslbkit / HAProxy (median, min,
# max over the rounds). A measurement that cannot be trusted aborts its row
# with a message instead of printing a figure: a lost or garbled control
# reply from the target server, a checker that died, or an achieved rate
# outside 95–105 % of the intended rate (then the engine did not do the work
# being priced).
#
# Environment: ROUNDS=3, NS="1000 5000 10000", MODES="http tcp", WARMUP=5, WINDOW=20
# (seconds), INTERVAL=1, CHECK_CPU=1 and TARGET_CPU=0 (taskset cores; empty
# to not pin), WORKERS (Monitor concurrency; default max(256, N/5), enough
# for N probes a second at up to 200 ms latency), NICE=-10 (priority of the
# target and the checkers when root; empty to leave it), CHECK_ENV (extra
# environment for gslbprobe only, e.g. "GOMEMLIMIT=48MiB"; empty by default),
# BASE=20000 and CONTROL_PORT=19999 (the targets' first port and the target
# server's control port; HAProxy's unused listener takes CONTROL_PORT - 1).
# Needs root to install haproxy with apt if it is absent; see README.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3}
NS=${NS:-"1000 5000 10000"}
MODES=${MODES:-"http tcp"}
WARMUP=${WARMUP:-5}
WINDOW=${WINDOW:-20}
INTERVAL=${INTERVAL:-1}
CHECK_CPU=${CHECK_CPU-1}
TARGET_CPU=${TARGET_CPU-0}
WORKERS=${WORKERS:-}
NICE=${NICE--10}
CHECK_ENV=${CHECK_ENV:-}
BASE=${BASE:-20000}
CONTROL_PORT=${CONTROL_PORT:-19999}
CLK_TCK=$(getconf CLK_TCK)

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

counts() { # "<accepted> <http answered> <syns>" from the target server, or fail
  local line
  exec 3<>"/dev/tcp/127.0.0.1/$CONTROL_PORT" || return 1
  printf 'GET /count HTTP/1.0\r\n\r\n' >&3
  line=$(tail -n 1 <&3 2>/dev/null) || line=""
  exec 3<&- 3>&-
  [[ $line =~ ^[0-9]+\ [0-9]+\ -?[0-9]+$ ]] || { echo "control reply lost or garbled: '$line'" >&2; return 1; }
  echo "$line"
}

probes_at_target() { # MODE: HTTP requests answered, or TCP SYNs received; fails on a bad reply
  local a h s line
  line=$(counts) || return 1
  read -r a h s <<<"$line"
  if [ "$1" = http ]; then
    echo "$h"
  elif [ "$s" -ge 0 ]; then
    echo "$s" # HAProxy's connect-only checks never reach accept()
  else
    echo "$a"
  fi
}

haproxy_cfg() { # N MODE > file
  local n=$1 mode=$2
  cat <<EOF
global
  nbthread 1
defaults
  mode $mode
  timeout connect 1s
  timeout check 1s
  timeout client 10s
  timeout server 10s
frontend unused # HAProxy refuses to start without a listener; nothing connects here
  bind 127.0.0.1:$((CONTROL_PORT - 1))
  default_backend checks
backend checks
EOF
  if [ "$mode" = http ]; then
    echo "  option httpchk GET /"
  fi
  echo "  default-server check inter ${INTERVAL}s fall 3 rise 2"
  for ((i = 0; i < n; i++)); do
    echo "  server s$i 127.0.0.1:$((BASE + i))"
  done
}

RESULTS="$WORK/results"
: >"$RESULTS"

abort_row() { # ROUND ENGINE N MODE REASON: the row prints no figure
  echo "ABORT $1 $2 $3 $4 $5" >>"$RESULTS"
  echo "   row $2 N=$3 $4 aborted (round $1): $5" >&2
}

measure() { # ROUND ENGINE N MODE PID
  local round=$1 engine=$2 n=$3 mode=$4 pid=$5
  sleep "$WARMUP"
  local c0 p0 t0 c1 p1 t1 rss line
  kill -0 "$pid" 2>/dev/null || { abort_row "$round" "$engine" "$n" "$mode" "the checker exited during the warm-up"; return; }
  c0=$(cpu_ticks "$pid"); t0=$(date +%s.%N)
  p0=$(probes_at_target "$mode") || { abort_row "$round" "$engine" "$n" "$mode" "control reply lost at the window's start"; return; }
  sleep "$WINDOW"
  kill -0 "$pid" 2>/dev/null || { abort_row "$round" "$engine" "$n" "$mode" "the checker exited during the window"; return; }
  c1=$(cpu_ticks "$pid"); t1=$(date +%s.%N)
  p1=$(probes_at_target "$mode") || { abort_row "$round" "$engine" "$n" "$mode" "control reply lost at the window's end"; return; }
  rss=$(rss_kib "$pid")
  line=$(awk -v r="$round" -v e="$engine" -v n="$n" -v m="$mode" -v dc=$((c1 - c0)) -v dp=$((p1 - p0)) \
      -v hz="$CLK_TCK" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
      -v iv="$INTERVAL" -v rss="$rss" 'BEGIN {
    cpu_ms = dc * 1000 / hz
    per1k = dp > 0 ? cpu_ms / (dp / 1000) : 0
    rate = 100 * dp / (n * w / iv)
    printf "%d %s %d %s %.1f %d %.0f %.2f %d\n", r, e, n, m, per1k, rss, rss * 1024 / n, rate, dp
  }')
  local f=($line)
  if ! is_num "${f[4]}" || ! is_num "${f[5]}" || [ "${f[8]}" -le 0 ]; then
    abort_row "$round" "$engine" "$n" "$mode" "a figure is missing: $line"
  elif ! in_range "${f[7]}" 95 105; then
    abort_row "$round" "$engine" "$n" "$mode" "rate ${f[7]} % of the intended rate, outside 95–105 %"
  else
    echo "$line" | tee -a "$RESULTS" >&2
  fi
}

echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds" | tee "$WORK/header" >&2
for round in $(seq "$ROUNDS"); do
  echo "=== round $round of $ROUNDS" >&2
  for n in $NS; do
    echo "== N=$n: starting the target server" >&2
    "${PIN_TARGET[@]}" "$WORK/target" -n "$n" -base "$BASE" -control "127.0.0.1:$CONTROL_PORT" >"$WORK/target.out" 2>&1 &
    tpid=$!
    PIDS+=("$tpid")
    wait_ready "$WORK/target.out" "$tpid"
    for mode in $MODES; do
      echo "-- N=$n $mode: haproxy" >&2
      haproxy_cfg "$n" "$mode" >"$WORK/haproxy.cfg"
      "${PIN_CHECK[@]}" haproxy -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.out" 2>&1 &
      hpid=$!
      PIDS+=("$hpid")
      measure "$round" haproxy "$n" "$mode" "$hpid"
      kill "$hpid"; wait "$hpid" 2>/dev/null || true
      sleep 2 # let the last checks drain

      echo "-- N=$n $mode: gslbkit" >&2
      "${PIN_CHECK[@]}" "${GP_ENV[@]}" "$WORK/gslbprobe" -n "$n" -base "$BASE" -mode "$mode" \
        -interval "${INTERVAL}s" -timeout "${INTERVAL}s" -workers "${WORKERS:-$(( n / 5 > 256 ? n / 5 : 256 ))}" \
        >"$WORK/gslbprobe.out" 2>&1 &
      gpid=$!
      PIDS+=("$gpid")
      wait_ready "$WORK/gslbprobe.out" "$gpid"
      measure "$round" gslbkit "$n" "$mode" "$gpid"
      kill "$gpid"; wait "$gpid" 2>/dev/null || true
      cat "$WORK/gslbprobe.out" | grep -v '^ready$' >&2 || true
      sleep 2
    done
    kill "$tpid"; wait "$tpid" 2>/dev/null || true
  done
done

echo
cat "$WORK/header"
echo "median of $ROUNDS rounds (min–max); a row with an aborted round shows why instead of figures"
printf '%-8s %6s %-5s %24s %26s %20s %24s\n' engine N mode "CPU ms/1000 probes" "RSS KiB" "B/target" "rate %"
for n in $NS; do for mode in $MODES; do for e in haproxy gslbkit; do
  why=$(awk -v e="$e" -v n="$n" -v m="$mode" '$1 == "ABORT" && $3 == e && $4 == n && $5 == m { $1 = ""; $3 = ""; $4 = ""; $5 = ""; sub(/^ +/, ""); gsub(/ +/, " "); print "round " $0; exit }' "$RESULTS")
  if [ -n "$why" ]; then
    printf '%-8s %6d %-5s ABORTED: %s\n' "$e" "$n" "$mode" "$why"
    continue
  fi
  col() { awk -v e="$e" -v n="$n" -v m="$mode" -v c="$1" '$2 == e && $3 == n && $4 == m { print $c }' "$RESULTS" | mmm | fmt_mmm "$2"; }
  printf '%-8s %6d %-5s %24s %26s %20s %24s\n' "$e" "$n" "$mode" "$(col 5 %.1f)" "$(col 6 %.0f)" "$(col 7 %.0f)" "$(col 8 %.2f)"
done; done; done
echo
printf '%6s %-5s %28s %28s\n' N mode "CPU gslbkit/HAProxy" "RSS gslbkit/HAProxy"
for n in $NS; do for mode in $MODES; do
  if grep -q "^ABORT [0-9]* [a-z]* $n $mode " "$RESULTS"; then
    printf '%6d %-5s %s\n' "$n" "$mode" "ABORTED (see above)"
    continue
  fi
  ratio() { awk -v n="$n" -v m="$mode" -v c="$1" '$3 == n && $4 == m { v[$1, $2] = $c; r[$1] = 1 }
    END { for (k in r) if (v[k, "haproxy"] > 0) print v[k, "gslbkit"] / v[k, "haproxy"] }' "$RESULTS" | mmm | fmt_mmm %.2f; }
  printf '%6d %-5s %28s %28s\n' "$n" "$mode" "$(ratio 5)" "$(ratio 6)"
done; done
