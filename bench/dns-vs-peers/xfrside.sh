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

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=$(mktemp -d /tmp/xfrside.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
for cmd in taskset go knotd dig; do
	command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install knot dnsutils)" >&2; exit 1; }
done
(cd "$repo" && go build -o "$dir/embedded" ./bench/dns-vs-peers/embedded && go build -o "$dir/zonegen" ./bench/dns-vs-peers/zonegen)
mkdir -p "$dir/z"
"$dir/zonegen" -names "$NAMES" -queries 1000 -dir "$dir/z"
zf=$dir/z/scale.zone
clk=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
secs() { awk -v t="$1" -v c="$clk" 'BEGIN {printf "%.2f", t / c}'; }

declare -A port pid
servers="knot embedded"
port[knot]=$((BASEPORT + 1)) port[embedded]=$((BASEPORT + 2)) port[old]=$((BASEPORT + 3))
secport=$((BASEPORT + 4))
mkdir -p "$dir/knot/db"
cat >"$dir/knot/knot.conf" <<CONF
server:
    listen: 127.0.0.1@${port[knot]}
    rundir: $dir/knot
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    tcp-io-timeout: 30000
database:
    storage: $dir/knot/db
log:
  - target: stderr
    any: error
acl:
  - id: xfr
    address: 127.0.0.0/8
    action: transfer
zone:
  - domain: example.test
    file: $zf
    acl: xfr
    zonefile-sync: -1
    journal-content: changes
CONF
taskset -c "$SERVER_CPU" knotd -c "$dir/knot/knot.conf" >"$dir/knot.log" 2>&1 &
pid[knot]=$!
taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$zf" -addr "127.0.0.1:${port[embedded]}" -mode fast -xfr -load build >"$dir/embedded.log" 2>&1 &
pid[embedded]=$!
pids+=("${pid[knot]}" "${pid[embedded]}")
if [ -n "$OLD" ]; then
	taskset -c "$SERVER_CPU" "$OLD" -zonefile "$zf" -addr "127.0.0.1:${port[old]}" -mode fast -xfr -load build >"$dir/old.log" 2>&1 &
	pid[old]=$!
	pids+=("${pid[old]}")
	servers="$servers old"
fi
for s in $servers; do
	until dig +short +time=1 +tries=1 @127.0.0.1 -p "${port[$s]}" example.test SOA 2>/dev/null | grep -q hostmaster; do
		kill -0 "${pid[$s]}" 2>/dev/null || { echo "$s did not start" >&2; exit 1; }
		sleep 0.2
	done
done
echo "# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD) $NAMES names, $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-9s %9s %9s %9s %9s %9s %s\n' round primary refresh msgs messages sec-CPU prim-CPU load
for r in $(seq "$ROUNDS"); do
	for s in $servers; do
		sd=$dir/sec-$s-$r
		mkdir -p "$sd/db"
		cat >"$sd/knot.conf" <<CONF
server:
    listen: 127.0.0.1@$secport
    rundir: $sd
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
    tcp-remote-io-timeout: 900000
database:
    storage: $sd/db
log:
  - target: stderr
    any: info
remote:
  - id: primary
    address: 127.0.0.1@${port[$s]}
zone:
  - domain: example.test
    master: primary
    file: $sd/example.test.zone
    zonefile-sync: -1
    zonefile-load: none
    journal-content: changes
CONF
		p0=$(ticks "${pid[$s]}")
		taskset -c "$CLIENT_CPU" knotd -c "$sd/knot.conf" >"$sd/log" 2>&1 &
		sp=$!
		until grep -q "zone updated" "$sd/log"; do
			if grep -q "failed" "$sd/log"; then break; fi
			sleep 0.05
		done
		sc=$(ticks "$sp") p1=$(ticks "${pid[$s]}")
		kill "$sp"
		wait "$sp" 2>/dev/null || true
		refresh=$(grep -oE 'zone updated, [0-9.]+' "$sd/log" | awk '{print $3}')
		msgs=$(grep -oE 'AXFR, incoming, .*finished, [0-9.]+ seconds, [0-9]+ messages' "$sd/log" | sed -E 's/.*finished, ([0-9.]+) seconds, ([0-9]+) messages/\1 \2/')
		if [ -z "$refresh" ] || [ -z "$msgs" ]; then
			echo "$r $s: no finished AXFR: $(grep -E 'AXFR|failed' "$sd/log" | tail -n 1)"
			continue
		fi
		# shellcheck disable=SC2086
		printf '%-5s %-9s %9s %9s %9s %9s %9s %s\n' "$r" "$s" "$refresh" $msgs "$(secs "$sc")" "$(secs $((p1 - p0)))" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
