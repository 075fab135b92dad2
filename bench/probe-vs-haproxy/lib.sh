# Shared by run.sh and one.sh; source it after setting ROOT, TARGET_CPU,
# CHECK_CPU, CHECK_ENV and (optionally) NICE. It makes WORK (removed on exit,
# with every PID in PIDS killed), raises the open-file limit, and sets
# PIN_TARGET, PIN_CHECK and GP_ENV, the command prefixes for the target server
# and gslbprobe. nice, taskset and env exec their command, so $! of a
# background "${PIN_CHECK[@]}" "${GP_ENV[@]}" cmd & is cmd's own PID.

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

wait_ready() { # FILE PID: wait for "ready" in FILE
  for _ in $(seq 1 600); do
    grep -qx ready "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { echo "process $2 died:" >&2; cat "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2
  return 1
}
