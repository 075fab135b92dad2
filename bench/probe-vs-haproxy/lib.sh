# Shared by run.sh, maxn.sh, one.sh and profile.sh; source it after setting
# ROOT and (optionally) NICE and the knobs below. It makes WORK (removed on
# exit, with every PID in PIDS killed), raises the open-file limit, and sets
# PIN_TARGET, PIN_CHECK and GP_ENV, the command prefixes for the target server
# and gslbprobe. nice, taskset and env exec their command, so $! of a
# background "${PIN_CHECK[@]}" "${GP_ENV[@]}" cmd & is cmd's own PID.

# The knobs every script shares, where the caller left them unset: the
# target's and the checker's cores (empty: not pinned), the checker's
# environment, the shortest check interval in seconds, the most checks a
# second (a larger N gets a longer interval: N / RATE seconds), gslbprobe's
# workers (empty: a fifth of the checks a second, at least 256), the targets
# per loopback address (PORTS, one per port, on 127.1.0.0 on; 0: every target
# on 127.0.0.1, one port each) and the target server's processes (TPROCS,
# each serving its share of the ports).
TARGET_CPU=${TARGET_CPU-0}
CHECK_CPU=${CHECK_CPU-1}
CHECK_ENV=${CHECK_ENV:-}
INTERVAL=${INTERVAL:-1}
RATE=${RATE:-10000}
WORKERS=${WORKERS:-}
PORTS=${PORTS-4}
# TLS_MAX=1.2: HTTPS over TLS 1.2 for both engines (the targets serve it
# too, HAProxy gets ssl-max-ver TLSv1.2, gslbprobe -max-version 1.2); empty:
# TLS 1.3, the targets' only version.
TLS_MAX=${TLS_MAX:-}
# TARGET_FLAGS: extra flags for the target server (e.g. "-accepters 256").
TARGET_FLAGS=${TARGET_FLAGS:-}
TPROCS=${TPROCS:-2}
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
# Every probe in flight and every connection the target server accepts is a
# descriptor: raise the soft limit to the hard one (20,000 here), for this
# shell and everything it starts.
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

# The functions below need WORK, BASE, CONTROL_PORT, INTERVAL, RATE, PORTS,
# TPROCS, WARMUP, WINDOW, CLK_TCK and the PIN_* prefixes; run.sh and maxn.sh
# use them.

iv_ms() { # N: the check interval at N targets, in ms: INTERVAL, or longer to keep N / interval ≤ RATE
  awk -v n="$1" -v iv="$INTERVAL" -v r="$RATE" 'BEGIN { ms = iv * 1000; m = int((n * 1000 + r - 1) / r); print (m > ms ? m : ms) }'
}

warmup_s() { # N: WARMUP plus one interval (both engines spread their first checks over one interval)
  awk -v w="$WARMUP" -v ms="$(iv_ms "$1")" 'BEGIN { print w + ms / 1000 }'
}

window_s() { # N: WINDOW rounded up to a whole number of intervals (each target then counts the
  # same number of probes whatever its phase; HAProxy's first checks are not spread evenly over a
  # long interval)
  awk -v w="$WINDOW" -v ms="$(iv_ms "$1")" 'BEGIN { iv = ms / 1000; k = int(w / iv); if (k * iv < w) k++; if (k < 1) k = 1; print k * iv }'
}

nports() { # N: the ports the targets use (PORTS, or N with PORTS=0)
  if [ "$PORTS" -gt 0 ]; then echo $((PORTS < $1 ? PORTS : $1)); else echo "$1"; fi
}

# target_addrs N: target i's address, one a line: 127.0.0.1:BASE+i with
# PORTS=0, else port BASE + i mod PORTS of 127.1.0.0 + i / PORTS (the same
# as gslbprobe's -ports).
target_addrs() {
  awk -v n="$1" -v b="$BASE" -v p="$PORTS" 'BEGIN {
    for (i = 0; i < n; i++) {
      if (p <= 0) { print "127.0.0.1:" (b + i); continue }
      a = int(i / p)
      printf "127.%d.%d.%d:%d\n", 1 + int(a / 65536), int(a / 256) % 256, a % 256, b + i % p
    }
  }'
}

counts() { # the target servers' totals "<accepted> <http answered> <syns> <full TLS> <resumed TLS>", or fail
  local line k a=0 h=0 s=0 f=0 r=0 x1 x2 x3 x4 x5
  for ((k = 0; k < TCOUNT; k++)); do
    exec 3<>"/dev/tcp/127.0.0.$((k + 1))/$CONTROL_PORT" || return 1
    printf 'GET /count HTTP/1.0\r\n\r\n' >&3
    line=$(tail -n 1 <&3 2>/dev/null) || line=""
    exec 3<&- 3>&-
    [[ $line =~ ^[0-9]+\ [0-9]+\ -?[0-9]+\ [0-9]+\ [0-9]+$ ]] || { echo "control reply of target server $k lost or garbled: '$line'" >&2; return 1; }
    read -r x1 x2 x3 x4 x5 <<<"$line"
    a=$((a + x1)) h=$((h + x2)) f=$((f + x4)) r=$((r + x5))
    if [ "$x3" -lt 0 ] || [ "$s" -lt 0 ]; then s=-1; else s=$((s + x3)); fi
  done
  echo "$a $h $s $f $r"
}

target_cpu_ticks() { # the target servers' utime + stime together
  local p t=0
  for p in "${TPIDS[@]}"; do t=$((t + $(cpu_ticks "$p"))); done
  echo "$t"
}

stop_target() { # stop every target server process
  local p
  for p in "${TPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${TPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  TPIDS=()
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
  [ "$mode" = https ] && [ "$TLS_MAX" = 1.2 ] && ssl+=" ssl-max-ver TLSv1.2"
  cat <<EOC
global
  nbthread 1
  # HAProxy 2.6 reserves a descriptor per server with a check and, by
  # default (strict-limits), refuses to start when the hard limit is lower
  # (20,000 here, against 100,000 servers); a check holds a descriptor only
  # while it runs, a few hundred at 10,000 checks a second.
  no strict-limits
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
  echo "  default-server check inter $(iv_ms "$n") fall 3 rise 2$ssl"
  # An explicit id per server: HAProxy 2.6 compares the names of servers
  # without one pairwise at start-up (a check for duplicate names), which
  # takes minutes at 100,000 servers; with ids it starts in seconds.
  target_addrs "$n" | awk '{ print "  server s" NR - 1, $1, "id", NR }'
}

start_target() { # N MODE: start the target server processes (TLS for https), set TPIDS, wait until ready
  local n=$1 np procs k from to listen=127.0.0.1 tls=() tflags=()
  np=$(nports "$n")
  procs=$((TPROCS < np ? TPROCS : np))
  [ "$PORTS" -gt 0 ] && listen=0.0.0.0
  [ "$2" = https ] && tls=(-tls -ca "$WORK/ca.pem" -cakey "$WORK/ca.key")
  [ "$2" = https ] && [ "$TLS_MAX" = 1.2 ] && tls+=(-tls12)
  # The packet socket that counts SYNs runs its filter in the softirq of
  # every packet on lo, which on loopback is the checker's core: an HTTP
  # check makes some twenty such packet deliveries (each segment is seen
  # twice), about 1 µs of the checker's CPU per check for either engine.
  # Only TCP checks are counted by their SYNs; HTTP(S) checks by the
  # requests answered.
  [ "$2" != tcp ] && tls+=(-syn=false)
  [ -n "$TARGET_FLAGS" ] && read -r -a tflags <<<"$TARGET_FLAGS" && tls+=("${tflags[@]}")
  # A previous server's "ready" and CA must not be read as this one's: the
  # output file is truncated by the child, after this shell may look.
  rm -f "$WORK"/target*.out "$WORK/ca.pem" "$WORK/ca.key"
  TPIDS=()
  for ((k = 0; k < procs; k++)); do
    from=$((k * np / procs)) to=$(((k + 1) * np / procs))
    # One after the other: the first writes the CA, the others use it.
    "${PIN_TARGET[@]}" "$WORK/target" -ports $((to - from)) -base $((BASE + from)) -listen "$listen" \
      -control "127.0.0.$((k + 1)):$CONTROL_PORT" "${tls[@]}" >"$WORK/target$k.out" 2>&1 &
    TPIDS+=($!)
    PIDS+=($!)
    wait_ready "$WORK/target$k.out" "$!" || return 1
  done
  export TCOUNT=$procs # for counts, also in a child shell (profile.sh)
}

# drain_timewait: waits until at most TW_LEFT (1,000) TCP connections on
# loopback are in TIME_WAIT, for at most 65 s (Linux keeps one 60 s), so
# that every engine starts from the same kernel state. HAProxy's HTTP
# checks answer the target's FIN with a FIN, which leaves the target's side
# of each check in TIME_WAIT (up to net.ipv4.tcp_max_tw_buckets of them,
# 131,072 here): every packet of the next engine's checks is then looked up
# in a connection table holding them, and their timers expire on its core.
# A few are left by the script's own requests to the target's control port.
# Says how long it waited, if it did.
drain_timewait() {
  local t0=$SECONDS n
  while n=$(ss -Htan state time-wait '( src 127.0.0.0/8 )' 2>/dev/null | wc -l) && [ "$n" -gt "${TW_LEFT:-1000}" ]; do
    if [ $((SECONDS - t0)) -ge 65 ]; then
      echo "   $n connections still in TIME_WAIT after 65 s" >&2
      return 0
    fi
    sleep 1
  done
  [ $((SECONDS - t0)) -eq 0 ] || echo "   waited $((SECONDS - t0)) s for the connections in TIME_WAIT to end" >&2
}

start_checker() { # ENGINE N MODE: start HAProxy or gslbprobe, set CPID (gslbprobe: wait until ready)
  local e=$1 n=$2 mode=$3
  drain_timewait
  if [ "$e" = haproxy ]; then
    haproxy_cfg "$n" "$mode" >"$WORK/haproxy.cfg"
    "${PIN_CHECK[@]}" haproxy -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.out" 2>&1 &
    CPID=$!
    PIDS+=("$CPID")
    # Ready once its (unused) listener is bound: its configuration is read
    # and its checks start (seconds at 100,000 servers).
    local port=$((CONTROL_PORT - 1))
    for _ in $(seq 1 1200); do
      [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && return 0
      kill -0 "$CPID" 2>/dev/null || { echo "haproxy died:" >&2; cat "$WORK/haproxy.out" >&2; return 1; }
      sleep 0.1
    done
    echo "haproxy did not bind 127.0.0.1:$port in 120 s" >&2
    return 1
  fi
  local extra=()
  [ "$mode" = https ] && extra=(-ca "$WORK/ca.pem")
  [ "$mode" = https ] && [ -n "$TLS_MAX" ] && extra+=(-max-version "$TLS_MAX")
  [ -n "${GP_FLAGS:-}" ] && read -r -a extra_flags <<<"$GP_FLAGS" && extra+=("${extra_flags[@]}")
  rm -f "$WORK/gslbprobe.out" # see start_target
  local ms rate
  ms=$(iv_ms "$n")
  rate=$((n * 1000 / ms))
  "${PIN_CHECK[@]}" "${GP_ENV[@]}" "$WORK/gslbprobe" -n "$n" -base "$BASE" -ports "$PORTS" -mode "$mode" \
    -interval "${ms}ms" -timeout 1s -workers "${WORKERS:-$((rate / 5 > 256 ? rate / 5 : 256))}" \
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

# sample N MODE PID [RSS0]: after WARMUP and one interval, measures the
# checker PID over WINDOW (rounded up to whole intervals) and prints "<CPU ms per 1,000 probes> <RSS KiB>
# <RSS B/target> <rate %> <probes> <full TLS handshakes> <resumed> <target
# servers' CPU %> <(RSS − RSS0) B/target>" (the last -1 without RSS0, the
# checker's RSS with no targets, in KiB); or prints why not and fails
# (checker gone, control reply lost, a figure missing). The rate is not
# judged here.
sample() {
  local n=$1 mode=$2 pid=$3 rss0=${4:--1}
  sleep "$(warmup_s "$n")"
  local c0 tc0 t0 k0 c1 tc1 t1 k1 rss line
  kill -0 "$pid" 2>/dev/null || { echo "the checker exited during the warm-up"; return 1; }
  c0=$(cpu_ticks "$pid"); tc0=$(target_cpu_ticks); t0=$(date +%s.%N)
  k0=$(counts) || { echo "control reply lost at the window's start"; return 1; }
  sleep "$(window_s "$n")"
  kill -0 "$pid" 2>/dev/null || { echo "the checker exited during the window"; return 1; }
  c1=$(cpu_ticks "$pid"); tc1=$(target_cpu_ticks); t1=$(date +%s.%N)
  k1=$(counts) || { echo "control reply lost at the window's end"; return 1; }
  local stray tp
  stray=$(off_cpu "$pid" "$CHECK_CPU")
  for tp in "${TPIDS[@]}"; do stray+=$(off_cpu "$tp" "$TARGET_CPU"); done
  [ -z "$stray" ] || { echo "threads allowed off their core ($stray): the checker and the target would share one"; return 1; }
  rss=$(rss_kib "$pid")
  local f0 r0 f1 r1
  read -r _ _ _ f0 r0 <<<"$k0"
  read -r _ _ _ f1 r1 <<<"$k1"
  line=$(awk -v n="$n" -v dc=$((c1 - c0)) -v dtc=$((tc1 - tc0)) -v dp=$(($(probes_of "$mode" "$k1") - $(probes_of "$mode" "$k0"))) \
      -v df=$((f1 - f0)) -v dr=$((r1 - r0)) -v hz="$CLK_TCK" -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
      -v iv="$(iv_ms "$n")" -v rss="$rss" -v rss0="$rss0" 'BEGIN {
    cpu_ms = dc * 1000 / hz
    per1k = dp > 0 ? cpu_ms / (dp / 1000) : 0
    net = rss0 >= 0 ? (rss - rss0) * 1024 / n : -1
    printf "%.1f %d %.0f %.2f %d %d %d %.0f %.0f\n", per1k, rss, rss * 1024 / n, 100 * dp / (n * w / (iv / 1000)), dp, df, dr, 100 * dtc / hz / w, net
  }')
  local f=($line)
  if ! is_num "${f[0]}" || ! is_num "${f[1]:-}" || [ "${f[4]:-0}" -le 0 ] ||
      { [ "$rss0" -ge 0 ] && ! is_num "${f[8]:-}"; } ||
      { [ "$mode" = https ] && [ $((${f[5]:-0} + ${f[6]:-0})) -le 0 ]; }; then
    echo "a figure is missing: $line"
    return 1
  fi
  echo "$line"
}

# rss_idle ENGINE MODE: the checker's RSS in KiB with no targets, WARMUP
# seconds after its start (the fixed cost that memory per target leaves
# out), or why not (and fail).
rss_idle() {
  start_checker "$1" 0 "$2" >&2 || { echo "the checker did not start with no targets"; return 1; }
  sleep "$WARMUP"
  local rss
  rss=$(rss_kib "$CPID" 2>/dev/null) || rss=""
  stop_checker "$1" 2>/dev/null
  is_num "$rss" || { echo "no RSS of the checker with no targets"; return 1; }
  echo "$rss"
}
