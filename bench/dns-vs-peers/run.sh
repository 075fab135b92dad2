#!/usr/bin/env bash
# Side-by-side DNS benchmark: gslbkit's embedded zone (three modes, and the
# fast one without its UDP pause, fast-nopause) vs Knot,
# BIND 9 and, when a coredns binary is found, CoreDNS (file plugin), one
# zone (~100 names, 2-4 A records each, TTL 30, some CNAMEs),
# 10,000 queries (~10 % NXDOMAIN) replayed by dnsperf. Each server is pinned
# to core $SERVER_CPU and dnsperf to core $CLIENT_CPU; every server runs at
# saturation and at a fixed rate over UDP, and at saturation over TCP
# (dnsperf -m tcp, one connection; load "tcp"), interleaved, $ROUNDS
# times; LOADS picks the loads (default "saturate fixed tcp"; "sat-ecs" and
# "fix-ecs" are saturate and fixed with an EDNS Client Subnet option on
# every query, 10.1.2.0/24, to compare with the same loads without). Server CPU is
# read from /proc/PID/stat (utime+stime) before and after each run.
#
#   bench/dns-vs-peers/run.sh            # needs knotd, named, dnsperf, taskset, go (coredns optional)
#   DURATION=5 ROUNDS=1 SERVERS="fast knot" bench/dns-vs-peers/run.sh
#   LOADS=tcp SERVERS="fast knot" bench/dns-vs-peers/run.sh
#   COREDNS=/path/to/coredns bench/dns-vs-peers/run.sh
#   FAST_FLAGS="-udp-coalesce 80us" SERVERS="fast knot" bench/dns-vs-peers/run.sh
#
# CoreDNS is optional: the binary is $COREDNS, else `coredns` on PATH, else
# /tmp/coredns-bin/coredns (GOBIN=/tmp/coredns-bin go install
# github.com/coredns/coredns@v1.15.0, outside this module). Without one the
# coredns server is skipped with a message.
#
# Prints one line per run: server, load, qps, average latency, lost
# queries, server CPU busy %, server CPU microseconds per query; then a
# table with the median of the rounds (min–max) per server and load, and
# the ratios of CPU per query to Knot's. A run whose figures cannot be
# trusted aborts its row with a message instead of a figure: dnsperf
# printed no count, rate or latency, completed nothing, or (at the fixed
# rate) achieved less than 95 % or more than 105 % of FIXED_QPS.
set -euo pipefail

DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
FIXED_QPS=${FIXED_QPS:-30000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASEPORT=${BASEPORT:-15300}
LOADS=${LOADS:-"saturate fixed tcp"}
for l in $LOADS; do
	case $l in saturate | fixed | tcp | sat-ecs | fix-ecs) ;; *) echo "unknown load $l (saturate fixed tcp sat-ecs fix-ecs)" >&2; exit 1 ;; esac
done

coredns_bin=${COREDNS:-}
if [ -z "$coredns_bin" ]; then
	coredns_bin=$(command -v coredns || true)
	[ -n "$coredns_bin" ] || coredns_bin=/tmp/coredns-bin/coredns
fi
[ -x "$coredns_bin" ] || coredns_bin=""
SERVERS=${SERVERS:-"knot bind coredns miekg batch fast fast-nopause"}
if [ -z "$coredns_bin" ] && [[ " $SERVERS " == *" coredns "* ]]; then
	echo "# coredns skipped: no binary (set COREDNS=path, put coredns on PATH, or build /tmp/coredns-bin/coredns)" >&2
	SERVERS=$(tr ' ' '\n' <<<"$SERVERS" | grep -vx coredns | tr '\n' ' ')
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
dir=$(mktemp -d /tmp/dns-vs-peers.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

for cmd in dnsperf taskset go; do
	command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install dnsperf; see the README in this directory)" >&2; exit 1; }
done

(cd "$repo" && go build -o "$dir/embedded" ./bench/dns-vs-peers/embedded)
"$dir/embedded" -gen "$dir"
clk=$(getconf CLK_TCK)

port_of() {
	case $1 in
	knot) echo $((BASEPORT + 1)) ;; bind) echo $((BASEPORT + 2)) ;;
	miekg) echo $((BASEPORT + 3)) ;; batch) echo $((BASEPORT + 4)) ;; fast) echo $((BASEPORT + 5)) ;;
	coredns) echo $((BASEPORT + 6)) ;; fast-nopause) echo $((BASEPORT + 7)) ;;
	*) echo "unknown server $1 (knot bind coredns miekg batch fast fast-nopause)" >&2; exit 1 ;;
	esac
}

start_server() { # name -> sets started_pid (runs in this shell, so cleanup sees it)
	local s=$1 port
	port=$(port_of "$s")
	if dnsperf_probe "$port"; then
		echo "port $port already answers: stop that server first" >&2
		exit 1
	fi
	case $s in
	knot)
		mkdir -p "$dir/knot"
		cat >"$dir/knot/knot.conf" <<CONF
server:
    listen: 127.0.0.1@$port
    rundir: $dir/knot
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: $dir/knot/db
log:
  - target: stderr
    any: error
template:
  - id: default
    storage: $dir
    file: "%s.zone"
zone:
  - domain: example.test
CONF
		taskset -c "$SERVER_CPU" knotd -c "$dir/knot/knot.conf" >"$dir/knot.log" 2>&1 &
		;;
	bind)
		mkdir -p "$dir/bind"
		cat >"$dir/bind/named.conf" <<CONF
options {
  directory "$dir/bind"; pid-file "$dir/bind/named.pid";
  listen-on port $port { 127.0.0.1; }; listen-on-v6 { none; };
  recursion no; dnssec-validation no; minimal-responses yes;
};
zone "example.test" { type primary; file "$dir/example.test.zone"; };
CONF
		taskset -c "$SERVER_CPU" named -g -u root -n 1 -c "$dir/bind/named.conf" >"$dir/bind.log" 2>&1 &
		;;
	coredns)
		mkdir -p "$dir/coredns"
		cat >"$dir/coredns/Corefile" <<CONF
example.test:$port {
    bind 127.0.0.1
    file $dir/example.test.zone
}
CONF
		taskset -c "$SERVER_CPU" "$coredns_bin" -quiet -conf "$dir/coredns/Corefile" >"$dir/coredns.log" 2>&1 &
		;;
	miekg | batch | fast)
		# shellcheck disable=SC2086 # FAST_FLAGS: extra flags for the embedded server, split on spaces
		taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/example.test.zone" -addr "127.0.0.1:$port" -mode "$s" ${FAST_FLAGS:-} >"$dir/$s.log" 2>&1 &
		;;
	fast-nopause) # the fast server with ServerConfig.UDPCoalesce 0, for comparison
		taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/example.test.zone" -addr "127.0.0.1:$port" -mode fast -udp-coalesce 0 >"$dir/$s.log" 2>&1 &
		;;
	esac
	started_pid=$!
	pids+=("$started_pid")
	# Ready when it answers.
	for _ in $(seq 100); do
		if ! kill -0 "$started_pid" 2>/dev/null; then break; fi
		if dnsperf_probe "$port"; then return; fi
		sleep 0.1
	done
	echo "server $s did not start; log:" >&2
	cat "$dir/$s.log" >&2 || true
	exit 1
}

dnsperf_probe() {
	echo "svc000.example.test A" >"$dir/probe.txt"
	dnsperf -s 127.0.0.1 -p "$1" -d "$dir/probe.txt" -n 1 -t 1 2>/dev/null | grep -q "Queries completed:.*1 "
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_one() { # round server pid load: prints the run, appends it (or ABORT) to $dir/results
	local round=$1 s=$2 pid=$3 load=$4 port out before after
	port=$(port_of "$s")
	local rate=()
	case $load in fixed | fix-ecs) rate=(-Q "$FIXED_QPS") ;; tcp) rate=(-m tcp) ;; esac
	case $load in *-ecs) rate+=(-E 8:0001180a0102) ;; esac # family 1, /24, scope 0, 10.1.2
	before=$(cpu_ticks "$pid")
	out=$(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$dir/queries.txt" -l "$DURATION" -c 1 -T 1 -q 200 "${rate[@]}" 2>&1) || true
	after=$(cpu_ticks "$pid" 2>/dev/null) || after=""
	local done lost qps lat why=""
	done=$(awk '/Queries completed:/ {print $3}' <<<"$out")
	lost=$(awk '/Queries lost:/ {print $3}' <<<"$out")
	qps=$(awk '/Queries per second:/ {print $4}' <<<"$out")
	lat=$(awk '/Average Latency/ {print $4; exit}' <<<"$out") # the first: TCP adds the connections' own
	if [ -z "$after" ]; then
		why="the server exited during the run"
	elif ! is_num "$done" || ! is_num "$qps" || ! is_num "$lat" || ! is_num "$lost"; then
		why="dnsperf printed no count, rate or latency: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	elif [ "$done" -eq 0 ]; then
		why="no query completed"
	elif { [ "$load" = fixed ] || [ "$load" = fix-ecs ]; } && ! in_range "$qps" "$(awk -v q="$FIXED_QPS" 'BEGIN {print 0.95 * q}')" "$(awk -v q="$FIXED_QPS" 'BEGIN {print 1.05 * q}')"; then
		why="achieved $qps q/s, outside 95–105 % of $FIXED_QPS"
	fi
	if [ -n "$why" ]; then
		echo "ABORT $round $s $load $why" >>"$dir/results"
		printf '%-7s %-8s row aborted (round %d): %s\n' "$s" "$load" "$round" "$why"
		return
	fi
	awk -v r="$round" -v s="$s" -v l="$load" -v q="$qps" -v lat="$lat" -v lost="$lost" -v d="$done" -v t=$((after - before)) -v clk="$clk" -v dur="$DURATION" -v res="$dir/results" 'BEGIN {
		cpu = t / clk
		per = cpu * 1e6 / d
		printf "%-7s %-8s %9.0f qps  %7.1f us avg  %7s lost  %5.1f%% busy  %6.2f us CPU/query\n", s, l, q, lat * 1e6, lost, 100 * cpu / dur, per
		printf "%d %s %s %.0f %.1f %.3f %s\n", r, s, l, q, lat * 1e6, per, lost >> res
	}'
}

# The miekg and batch modes serve UDP only: no tcp row for them.
tcp_capable() { [ "$2" != tcp ] || { [ "$1" != miekg ] && [ "$1" != batch ]; }; }

declare -A pid_of
for s in $SERVERS; do
	start_server "$s"
	pid_of[$s]=$started_pid
done
: >"$dir/results"
header="# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown) $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION}s per run, $ROUNDS rounds"
echo "$header"
for round in $(seq "$ROUNDS"); do
	for load in $LOADS; do
		for s in $SERVERS; do
			tcp_capable "$s" "$load" || continue
			run_one "$round" "$s" "${pid_of[$s]}" "$load"
		done
	done
done

echo
echo "$header"
echo "median of $ROUNDS rounds (min–max); fixed = $FIXED_QPS q/s over UDP, tcp = saturation over one TCP connection; a row with an aborted round shows why"
printf '%-13s %-8s %26s %24s %28s %22s\n' server load "q/s" "avg latency us" "CPU us/query" "CPU / Knot's"
for load in $LOADS; do
	for s in $SERVERS; do
		if ! tcp_capable "$s" "$load"; then
			printf '%-13s %-8s (serves UDP only)\n' "$s" "$load"
			continue
		fi
		why=$(awk -v s="$s" -v l="$load" '$1 == "ABORT" && $3 == s && $4 == l { $1 = $3 = $4 = ""; sub(/^ +/, ""); gsub(/ +/, " "); print "round " $0; exit }' "$dir/results")
		if [ -n "$why" ]; then
			printf '%-13s %-8s ABORTED: %s\n' "$s" "$load" "$why"
			continue
		fi
		col() { awk -v s="$s" -v l="$load" -v c="$1" '$2 == s && $3 == l { print $c }' "$dir/results" | mmm | fmt_mmm "$2"; }
		ratio="-"
		if [ "$s" != knot ] && [[ " $SERVERS " == *" knot "* ]] && ! grep -q "^ABORT [0-9]* knot $load " "$dir/results"; then
			ratio=$(awk -v s="$s" -v l="$load" '$3 == l && ($2 == s || $2 == "knot") { v[$1, $2] = $6; r[$1] = 1 }
				END { for (k in r) if (v[k, "knot"] > 0 && v[k, s] != "") print v[k, s] / v[k, "knot"] }' "$dir/results" | mmm | fmt_mmm %.2f)
		fi
		printf '%-13s %-8s %26s %24s %28s %22s\n' "$s" "$load" "$(col 4 %.0f)" "$(col 5 %.1f)" "$(col 6 %.2f)" "$ratio"
	done
done
