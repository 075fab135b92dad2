#!/usr/bin/env bash
# Where one engine's CPU goes, per probe: system calls by name, context
# switches and CPU time per probe counted at the target, for HAProxy or
# gslbprobe alone against the target server.
#
#   profile.sh ENGINE N MODE SECONDS     # ENGINE: haproxy or gslbkit; MODE: http, tcp or https
#
# Starts the target server with N listeners (TARGET_CPU, core 0), then the
# engine (CHECK_CPU, core 1; 1 s interval and timeout), waits WARMUP (5)
# seconds, then counts for SECONDS, with `perf stat` on the engine's PID:
# every system call it enters (the syscalls:sys_enter_* tracepoints), its
# task clock and context switches, and the probes counted at the target (TCP:
# SYNs, which needs root for the packet socket; HTTP: requests answered). It
# prints each count per probe. A tracepoint count costs the engine little, so
# the figures are those of a normal run; wall-clock and CPU-time figures still
# depend on how quiet the machine is, the system-call counts do not.
#
# With MODE https it prints what the target servers' handshakes negotiated
# (version, cipher suite, key exchange, full or resumed; the whole run, warm-up
# included). It also prints the engine's user and system CPU time per probe (utime and
# stime from /proc/PID/stat over the same window). PERF_RECORD=FILE then
# records the engine's call graphs (perf record -e cpu-clock -g) for another
# SECONDS into FILE, user and kernel together (perf report -i FILE --sort dso
# splits them). PERF_EVENTS adds events to the perf stat list (comma-separated). GSLBPROBE_FLAGS
# passes flags to gslbprobe (e.g. "-cpuprofile /tmp/cpu.pprof"). BIN: prebuilt
# target and gslbprobe (default: built into a temporary directory). BASE=30000
# and CONTROL_PORT=32767, HAProxy's unused listener CONTROL_PORT - 1: clear of
# run.sh's (20000 on) and one.sh's (5000 on) ports and below the ephemeral
# port range (/proc/sys/net/ipv4/ip_local_port_range, usually from 32768),
# where a probe's own source port can take a target's port first. The
# targets are laid out as in run.sh (PORTS=4 per loopback address, TPROCS=2
# target processes, the interval N / RATE s past RATE=10000 targets); with
# PORTS=0 (one target per port of 127.0.0.1) N goes up to 2,766 by default.
set -euo pipefail

if [ $# -lt 4 ]; then
  echo "usage: $0 haproxy|gslbkit N http|tcp|https SECONDS" >&2
  exit 2
fi
engine=$1 n=$2 mode=$3 secs=$4
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BASE=${BASE:-30000}
CONTROL_PORT=${CONTROL_PORT:-32767}
WARMUP=${WARMUP:-5}
GSLBPROBE_FLAGS=${GSLBPROBE_FLAGS:-}
PERF_EVENTS=${PERF_EVENTS:-}

command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 1; }

. "$HERE/lib.sh"

BIN=${BIN:-}
if [ -n "$BIN" ]; then
  cp "$BIN/target" "$BIN/gslbprobe" "$WORK/"
else
  build_bins "$WORK"
fi

count() { # MODE: the target's probe count (see probes_of in lib.sh)
  local c
  c=$(counts) || exit 1
  probes_of "$1" "$c"
}

case "$engine" in
haproxy | gslbkit) ;;
*)
  echo "engine $engine: want haproxy or gslbkit" >&2
  exit 2
  ;;
esac
start_target "$n" "$mode"
# shellcheck disable=SC2034 # read by start_checker
GP_FLAGS=$GSLBPROBE_FLAGS
start_checker "$engine" "$n" "$mode"
pid=$CPID
sleep "$(warmup_s "$n")"

events=task-clock,context-switches,raw_syscalls:sys_enter
for s in socket setsockopt getsockopt fcntl connect epoll_ctl epoll_wait epoll_pwait \
  read write recvfrom sendto close futex nanosleep clock_gettime getpid tgkill timerfd_settime; do
  events+=",syscalls:sys_enter_$s"
done
[ -n "$PERF_EVENTS" ] && events+=",$PERF_EVENTS"
# The probes are counted by the command perf runs, so inside its window.
# utime and stime (fields 14 and 15 of /proc/PID/stat) are read with them.
ustime() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
export -f count counts probes_of ustime
export CONTROL_PORT
perf stat -x, -e "$events" -p "$pid" -o "$WORK/perf.csv" -- \
  bash -c 'ustime "$4" >"$2/t0" && count "$1" >"$2/p0" && sleep "$3" && count "$1" >"$2/p1" && ustime "$4" >"$2/t1"' _ "$mode" "$WORK" "$secs" "$pid"
probes=$(($(cat "$WORK/p1") - $(cat "$WORK/p0")))
read -r u0 s0 <"$WORK/t0"
read -r u1 s1 <"$WORK/t1"
if [ -n "${PERF_RECORD:-}" ]; then
  perf record -q -e cpu-clock -g -p "$pid" -o "$PERF_RECORD" -- sleep "$secs" 2>/dev/null
fi
kill "$pid"
wait "$pid" 2>/dev/null || true
echo "$engine N=$n $mode: $probes probes in ${secs} s at the target ($(awk -v p="$probes" -v n="$n" -v s="$secs" -v iv="$(iv_ms "$n")" 'BEGIN {printf "%.1f", 100 * p / (n * s * 1000 / iv)}') % of the rate)"
awk -F, -v p="$probes" '
  /^#/ || NF < 3 { next }
  { v = $1; name = $3; sub(/^syscalls:sys_enter_/, "", name) }
  v == "<not counted>" || v == "<not supported>" { next }
  name == "task-clock" { printf "  %-22s %10.2f us per probe\n", "CPU (task clock)", v * 1000 / p; next }
  v + 0 > 0 { printf "  %-22s %10.3f per probe\n", name, v / p }
' "$WORK/perf.csv"
awk -v p="$probes" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$CLK_TCK" 'BEGIN {
  printf "  %-22s %10.2f us per probe\n  %-22s %10.2f us per probe\n", "user time", u * 1e6 / hz / p, "system time", s * 1e6 / hz / p }'
[ "$engine" = gslbkit ] && { grep -v '^ready$' "$WORK/gslbprobe.out" >&2 || true; }
# What the handshakes negotiated (the target servers print it when stopped).
stop_target
[ "$mode" = https ] && { cat "$WORK"/target*.out | grep '^tls handshakes' | awk -F': ' '{c[$2] += $3} END {for (k in c) printf "  target: %s: %d handshakes\n", k, c[k]}' | sort; }
true
