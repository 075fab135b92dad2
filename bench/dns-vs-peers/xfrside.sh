#!/usr/bin/env bash
# AXFR side by side: Knot and the embedded server (and, with OLD=binary, an
# embedded server built from another commit) serve zonegen's zone of NAMES
# names at once, each pinned on the server core; a fresh Knot secondary on
# the client core transfers the zone from each in turn, ROUNDS times. Per
# transfer: the secondary's whole refresh and its messages ("zone updated,
# N seconds"; "AXFR ... finished, N seconds", as scale.sh reads them), and
# the CPU seconds the secondary and the primary used meanwhile, from
# /proc/PID/stat (the secondary's from its start: its start-up is the same
# for every primary). See README.md, "Scale".
#
#   NAMES=100000 ROUNDS=3 bench/dns-vs-peers/xfrside.sh
#   OLD=/tmp/embedded-before NAMES=1000000 ROUNDS=2 bench/dns-vs-peers/xfrside.sh
set -euo pipefail
NAMES=${NAMES:-100000}
ROUNDS=${ROUNDS:-3}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASEPORT=${BASEPORT:-17500}
OLD=${OLD:-}

LOAD_TIMEOUT=${LOAD_TIMEOUT:-900} # seconds: a server's start, and each transfer message

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
. "$repo/bench/lib/dnsperf.sh"
. "$repo/bench/lib/xfr.sh"
dir=$(mktemp -d /tmp/xfrside.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
for cmd in taskset go knotd; do
	command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install knot)" >&2; exit 1; }
done
build_xfr_tools
mkdir -p "$dir/z"
"$dir/zonegen" -names "$NAMES" -queries 1000 -dir "$dir/z"
zf=$dir/z/scale.zone
clk=$(getconf CLK_TCK)
secs() { awk -v t="$1" -v c="$clk" 'BEGIN {printf "%.2f", t / c}'; }

declare -A port pid
servers="knot embedded"
port[knot]=$((BASEPORT + 1)) port[embedded]=$((BASEPORT + 2)) port[old]=$((BASEPORT + 3))
secport=$((BASEPORT + 4))
start_server knot knot "${port[knot]}" "$zf"
pid[knot]=$started_pid
start_server embedded "$dir/embedded" "${port[embedded]}" "$zf" -load build
pid[embedded]=$started_pid
if [ -n "$OLD" ]; then
	start_server old "$OLD" "${port[old]}" "$zf" -load build
	pid[old]=$started_pid
	servers="$servers old"
fi
for s in $servers; do
	await_answer "${port[$s]}" "${pid[$s]}" || { echo "$s did not start; log:" >&2; cat "$dir/$s.log" >&2; exit 1; }
done
echo "# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD) $NAMES names, $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-9s %9s %9s %9s %9s %9s %s\n' round primary refresh msgs messages sec-CPU prim-CPU load
for r in $(seq "$ROUNDS"); do
	for s in $servers; do
		sd=$dir/sec-$s-$r
		p0=$(cpu_ticks "${pid[$s]}")
		start_secondary "$sd" "$secport" "${port[$s]}"
		sp=$sec_pid
		until grep -q "zone updated" "$sd/log"; do
			if grep -q "failed" "$sd/log"; then break; fi
			sleep 0.05
		done
		sc=$(cpu_ticks "$sp") p1=$(cpu_ticks "${pid[$s]}")
		kill "$sp"
		wait "$sp" 2>/dev/null || true
		refresh=$(refresh_seconds none '[0-9]+' "$sd/log")
		msgs=$(xfr_seconds AXFR "$sd/log")
		if [ -z "$refresh" ] || [ -z "$msgs" ]; then
			echo "$r $s: no finished AXFR: $(grep -E 'AXFR|failed' "$sd/log" | tail -n 1)"
			continue
		fi
		# shellcheck disable=SC2086
		printf '%-5s %-9s %9s %9s %9s %9s %9s %s\n' "$r" "$s" "$refresh" $msgs "$(secs "$sc")" "$(secs $((p1 - p0)))" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
