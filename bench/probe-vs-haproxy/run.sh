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
# It prints a table and the ratios gslbkit / HAProxy.
#
# Environment: NS="1000 5000 10000", MODES="http tcp", WARMUP=5, WINDOW=20
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

counts() { # "<accepted> <http answered> <syns>" from the target server
  local line
  exec 3<>"/dev/tcp/127.0.0.1/$CONTROL_PORT"
  printf 'GET /count HTTP/1.0\r\n\r\n' >&3
  line=$(tail -n 1 <&3)
  exec 3<&- 3>&-
  echo "$line"
}

probes_at_target() { # MODE: HTTP requests answered, or TCP SYNs received
  local a h s
  read -r a h s <<<"$(counts)"
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

measure() { # ENGINE N MODE PID
  local engine=$1 n=$2 mode=$3 pid=$4
  sleep "$WARMUP"
  local c0 p0 t0 c1 p1 t1 rss
  c0=$(cpu_ticks "$pid"); p0=$(probes_at_target "$mode"); t0=$(date +%s.%N)
  sleep "$WINDOW"
  c1=$(cpu_ticks "$pid"); p1=$(probes_at_target "$mode"); t1=$(date +%s.%N)
  rss=$(rss_kib "$pid")
  awk -v e="$engine" -v n="$n" -v m="$mode" -v dc=$((c1 - c0)) -v dp=$((p1 - p0)) \
      -v hz="$CLK_TCK" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
      -v iv="$INTERVAL" -v rss="$rss" 'BEGIN {
    cpu_ms = dc * 1000 / hz
    per1k = dp > 0 ? cpu_ms / (dp / 1000) : 0
    rate = 100 * dp / (n * w / iv)
    printf "%s %d %s %.1f %d %.0f %.2f %d\n", e, n, m, per1k, rss, rss * 1024 / n, rate, dp
  }' | tee -a "$RESULTS" >&2
}

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
    measure haproxy "$n" "$mode" "$hpid"
    kill "$hpid"; wait "$hpid" 2>/dev/null || true
    sleep 2 # let the last checks drain

    echo "-- N=$n $mode: gslbkit" >&2
    "${PIN_CHECK[@]}" "${GP_ENV[@]}" "$WORK/gslbprobe" -n "$n" -base "$BASE" -mode "$mode" \
      -interval "${INTERVAL}s" -timeout "${INTERVAL}s" -workers "${WORKERS:-$(( n / 5 > 256 ? n / 5 : 256 ))}" \
      >"$WORK/gslbprobe.out" 2>&1 &
    gpid=$!
    PIDS+=("$gpid")
    wait_ready "$WORK/gslbprobe.out" "$gpid"
    measure gslbkit "$n" "$mode" "$gpid"
    kill "$gpid"; wait "$gpid" 2>/dev/null || true
    cat "$WORK/gslbprobe.out" | grep -v '^ready$' >&2 || true
    sleep 2
  done
  kill "$tpid"; wait "$tpid" 2>/dev/null || true
done

echo
printf '%-8s %6s %-5s %14s %10s %12s %9s\n' engine N mode "CPU ms/1000" "RSS KiB" "B/target" "rate %"
while read -r e n m per1k rss pert rate dp; do
  printf '%-8s %6d %-5s %14.1f %10d %12.0f %9.2f\n' "$e" "$n" "$m" "$per1k" "$rss" "$pert" "$rate"
done <"$RESULTS"
echo
printf '%6s %-5s %18s %18s\n' N mode "CPU gslbkit/HAProxy" "RSS gslbkit/HAProxy"
awk '{ key = $2 " " $3; cpu[$1, key] = $4; rss[$1, key] = $5; keys[key] = 1 }
  END { for (k in keys) if (cpu["haproxy", k] > 0 && rss["haproxy", k] > 0) {
          split(k, a, " ")
          printf "%6d %-5s %18.2f %18.2f\n", a[1], a[2], cpu["gslbkit", k] / cpu["haproxy", k], rss["gslbkit", k] / rss["haproxy", k]
        } }' "$RESULTS" | sort -n
