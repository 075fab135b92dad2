# Shared by run.sh, maxn.sh, one.sh and profile.sh; source it after setting
# ROOT and (optionally) NICE and the knobs below. It makes WORK (removed on
# exit, with every PID in PIDS killed), raises the open-file limit, and sets
# PIN_TARGET, PIN_CHECK and GP_ENV, the command prefixes for the target server
# and gslbprobe. nice, taskset and env exec their command, so $! of a
# background "${PIN_CHECK[@]}" "${GP_ENV[@]}" cmd & is cmd's own PID.

# The knobs every script shares, where the caller left them unset: the
# target's and the checker's cores (empty: not pinned), the checker's
# environment, the check interval in seconds, gslbprobe's workers (empty:
# N/5, at least 256).
TARGET_CPU=${TARGET_CPU-0}
CHECK_CPU=${CHECK_CPU-1}
CHECK_ENV=${CHECK_ENV:-}
INTERVAL=${INTERVAL:-1}
WORKERS=${WORKERS:-}
CLK_TCK=$(getconf CLK_TCK)

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# A higher priority, when asked for and root (on a shared machine the target
# server must keep up with N connections a second; CPU time is measured, not
# wall time), then a core.
PIN_CHECK=()
PIN_TARGET=()
if [ -n "${NICE:-}" ] && [ "$(id -u)" = 0 ]; then
  PIN_CHECK=(nice -n "$NICE")
  PIN_TARGET=(nice -n "$NICE")
fi
if command -v taskset >/dev/null 2>&1; then
  [ -n "$CHECK_CPU" ] && PIN_CHECK+=(taskset -c "$CHECK_CPU")
  [ -n "$TARGET_CPU" ] && PIN_TARGET+=(taskset -c "$TARGET_CPU")
fi
GP_ENV=()
[ -n "$CHECK_ENV" ] && read -r -a GP_ENV <<<"env $CHECK_ENV"

build_bins() { # DIR: build the target server and gslbprobe into DIR
  (cd "$ROOT" && go build -o "$1/target" ./bench/probe-vs-haproxy/target \
              && go build -o "$1/gslbprobe" ./bench/probe-vs-haproxy/gslbprobe)
}

cpu_ticks() { # utime + stime of PID, in clock ticks (fields 14 and 15)
  sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# off_cpu PID CPU: the threads of PID allowed on a CPU other than CPU
# ("name:cpus" each), or nothing when CPU is empty (not pinned). A program
# may set its threads' affinity itself after taskset (Knot does, in the DNS
# bench); a checker that ran on the target's core would not be measured
# alone, so sample() checks both processes.
off_cpu() {
  [ -n "$2" ] || return 0
  local t allowed
  for t in /proc/"$1"/task/*; do
    allowed=$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status" 2>/dev/null) || continue
    [ -z "$allowed" ] || [ "$allowed" = "$2" ] || printf '%s:%s ' "$(cat "$t/comm" 2>/dev/null)" "$allowed"
  done
}

wait_ready() { # FILE PID: wait for a line "ready" in FILE (remove FILE before starting PID)
  for _ in $(seq 1 600); do
    grep -qx ready "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { echo "process $2 died:" >&2; cat "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2
  return 1
}

# The functions below need WORK, BASE, CONTROL_PORT, INTERVAL, WARMUP,
# WINDOW, CLK_TCK and the PIN_* prefixes; run.sh and maxn.sh use them.

counts() { # the target server's totals "<accepted> <http answered> <syns> <full TLS> <resumed TLS>", or fail
  local line
  exec 3<>"/dev/tcp/127.0.0.1/$CONTROL_PORT" || return 1
  printf 'GET /count HTTP/1.0\r\n\r\n' >&3
  line=$(tail -n 1 <&3 2>/dev/null) || line=""
  exec 3<&- 3>&-
  [[ $line =~ ^[0-9]+\ [0-9]+\ -?[0-9]+\ [0-9]+\ [0-9]+$ ]] || { echo "control reply lost or garbled: '$line'" >&2; return 1; }
  echo "$line"
}

probes_of() { # MODE COUNTS: HTTP(S) requests answered, or TCP SYNs received
  local a h s f r
  read -r a h s f r <<<"$2"
  if [ "$1" != tcp ]; then
    echo "$h"
  elif [ "$s" -ge 0 ]; then
    echo "$s" # HAProxy's connect-only checks never reach accept()
  else
    echo "$a"
  fi
}

haproxy_cfg() { # N MODE > file
  local n=$1 mode=$2 ssl=""
  [ "$mode" = https ] && ssl=" check-ssl verify none"
  cat <<EOC
global
  nbthread 1
defaults
  mode ${mode/https/http}
  timeout connect 1s
  timeout check 1s
  timeout client 10s
  timeout server 10s
frontend unused # HAProxy refuses to start without a listener; nothing connects here
  bind 127.0.0.1:$((CONTROL_PORT - 1))
  default_backend checks
backend checks
EOC
  if [ "$mode" != tcp ]; then
    echo "  option httpchk GET /"
  fi
  echo "  default-server check inter ${INTERVAL}s fall 3 rise 2$ssl"
  for ((i = 0; i < n; i++)); do
    echo "  server s$i 127.0.0.1:$((BASE + i))"
  done
}

start_target() { # N MODE: start the target server (TLS for https), set TPID, wait until ready
  local tls=()
  [ "$2" = https ] && tls=(-tls -ca "$WORK/ca.pem")
  # A previous server's "ready" and CA must not be read as this one's: the
  # output file is truncated by the child, after this shell may look.
  rm -f "$WORK/target.out" "$WORK/ca.pem"
  "${PIN_TARGET[@]}" "$WORK/target" -n "$1" -base "$BASE" -control "127.0.0.1:$CONTROL_PORT" "${tls[@]}" >"$WORK/target.out" 2>&1 &
  TPID=$!
  PIDS+=("$TPID")
  wait_ready "$WORK/target.out" "$TPID"
}

start_checker() { # ENGINE N MODE: start HAProxy or gslbprobe, set CPID (gslbprobe: wait until ready)
  local e=$1 n=$2 mode=$3
  if [ "$e" = haproxy ]; then
    haproxy_cfg "$n" "$mode" >"$WORK/haproxy.cfg"
    "${PIN_CHECK[@]}" haproxy -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.out" 2>&1 &
    CPID=$!
    PIDS+=("$CPID")
    return
  fi
  local extra=()
  [ "$mode" = https ] && extra=(-ca "$WORK/ca.pem")
  [ -n "${GP_FLAGS:-}" ] && read -r -a extra_flags <<<"$GP_FLAGS" && extra+=("${extra_flags[@]}")
  rm -f "$WORK/gslbprobe.out" # see start_target
  "${PIN_CHECK[@]}" "${GP_ENV[@]}" "$WORK/gslbprobe" -n "$n" -base "$BASE" -mode "$mode" \
    -interval "${INTERVAL}s" -timeout "${INTERVAL}s" -workers "${WORKERS:-$(( n / 5 > 256 ? n / 5 : 256 ))}" \
    "${extra[@]}" >"$WORK/gslbprobe.out" 2>&1 &
  CPID=$!
  PIDS+=("$CPID")
  wait_ready "$WORK/gslbprobe.out" "$CPID"
}

stop_checker() { # ENGINE: stop CPID (gslbprobe's report goes to stderr), let the last checks drain
  kill "$CPID" 2>/dev/null || true
  wait "$CPID" 2>/dev/null || true
  [ "$1" = gslbkit ] && { grep -v '^ready$' "$WORK/gslbprobe.out" >&2 || true; }
  sleep 2
}

# sample N MODE PID TPID: after WARMUP, measures the checker PID over WINDOW
# and prints "<CPU ms per 1,000 probes> <RSS KiB> <RSS B/target> <rate %>
# <probes> <full TLS handshakes> <resumed> <target server CPU %>"; or
# prints why not and fails (checker gone, control reply lost, a figure
# missing). The rate is not judged here.
sample() {
  local n=$1 mode=$2 pid=$3 tpid=$4
  sleep "$WARMUP"
  local c0 tc0 t0 k0 c1 tc1 t1 k1 rss line
  kill -0 "$pid" 2>/dev/null || { echo "the checker exited during the warm-up"; return 1; }
  c0=$(cpu_ticks "$pid"); tc0=$(cpu_ticks "$tpid"); t0=$(date +%s.%N)
  k0=$(counts) || { echo "control reply lost at the window's start"; return 1; }
  sleep "$WINDOW"
  kill -0 "$pid" 2>/dev/null || { echo "the checker exited during the window"; return 1; }
  c1=$(cpu_ticks "$pid"); tc1=$(cpu_ticks "$tpid"); t1=$(date +%s.%N)
  k1=$(counts) || { echo "control reply lost at the window's end"; return 1; }
  local stray
  stray="$(off_cpu "$pid" "$CHECK_CPU")$(off_cpu "$tpid" "$TARGET_CPU")"
  [ -z "$stray" ] || { echo "threads allowed off their core ($stray): the checker and the target would share one"; return 1; }
  rss=$(rss_kib "$pid")
  local f0 r0 f1 r1
  read -r _ _ _ f0 r0 <<<"$k0"
  read -r _ _ _ f1 r1 <<<"$k1"
  line=$(awk -v n="$n" -v dc=$((c1 - c0)) -v dtc=$((tc1 - tc0)) -v dp=$(($(probes_of "$mode" "$k1") - $(probes_of "$mode" "$k0"))) \
      -v df=$((f1 - f0)) -v dr=$((r1 - r0)) -v hz="$CLK_TCK" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
      -v iv="$INTERVAL" -v rss="$rss" 'BEGIN {
    cpu_ms = dc * 1000 / hz
    per1k = dp > 0 ? cpu_ms / (dp / 1000) : 0
    printf "%.1f %d %.0f %.2f %d %d %d %.0f\n", per1k, rss, rss * 1024 / n, 100 * dp / (n * w / iv), dp, df, dr, 100 * dtc / hz / w
  }')
  local f=($line)
  if ! is_num "${f[0]}" || ! is_num "${f[1]:-}" || [ "${f[4]:-0}" -le 0 ] ||
      { [ "$mode" = https ] && [ $((${f[5]:-0} + ${f[6]:-0})) -le 0 ]; }; then
    echo "a figure is missing: $line"
    return 1
  fi
  echo "$line"
}
