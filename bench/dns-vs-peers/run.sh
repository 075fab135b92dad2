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
#   BASE=main SERVERS="knot fast" bench/dns-vs-peers/run.sh   # head against a base commit, in the same run
#
# BASE=<commit> builds the embedded server of that commit too (a temporary
# git worktree, removed once built) and runs it in fast mode as one more
# server, fast@<short commit>, with BASE_FLAGS (default: FAST_FLAGS),
# interleaved with the others; the table then adds each row's CPU per query
# relative to the base's (head ÷ base on the fast row).
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
PROFILE=${PROFILE:-}
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
BASE=${BASE:-}
BASE_FLAGS=${BASE_FLAGS-${FAST_FLAGS:-}}
if [ -z "$coredns_bin" ] && [[ " $SERVERS " == *" coredns "* ]]; then
	echo "# coredns skipped: no binary (set COREDNS=path, put coredns on PATH, or build /tmp/coredns-bin/coredns)" >&2
	SERVERS=$(tr ' ' '\n' <<<"$SERVERS" | grep -vx coredns | tr '\n' ' ')
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
. "$repo/bench/lib/dnsperf.sh"
. "$repo/bench/lib/profile.sh"
dir=$(mktemp -d /tmp/dns-vs-peers.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -d "$dir/base-src" ]; then git -C "$repo" worktree remove --force "$dir/base-src" 2>/dev/null || true; fi
	# What the embedded server's UDP loops did with their pause (see
	# ServerConfig.UDPCoalesce): tried above the rate, kept where cheaper.
	for f in "$dir"/fast*.log; do
		[ -f "$f" ] && sed -n "s/^.*udp pause: /$(basename "$f" .log): udp pause: /p" "$f" >&2
	done
	rm -rf "$dir"
}
trap cleanup EXIT

for cmd in dnsperf taskset go; do
	command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install dnsperf; see the README in this directory)" >&2; exit 1; }
done

if [ "$PROFILE" = 1 ]; then profile_check; fi
(cd "$repo" && go build -o "$dir/embedded" ./bench/dns-vs-peers/embedded)
build_dnsready
base_row=""
if [ -n "$BASE" ]; then
	short=$(git -C "$repo" rev-parse --short "$BASE^{commit}") || { echo "BASE=$BASE is not a commit" >&2; exit 1; }
	base_row="fast@$short"
	SERVERS="$SERVERS $base_row"
	git -C "$repo" worktree add --quiet --detach "$dir/base-src" "$BASE"
	(cd "$dir/base-src" && go build -o "$dir/embedded-base" ./bench/dns-vs-peers/embedded)
	git -C "$repo" worktree remove --force "$dir/base-src"
fi
"$dir/embedded" -gen "$dir"
clk=$(getconf CLK_TCK)

port_of() {
	case $1 in
	knot) echo $((BASEPORT + 1)) ;; bind) echo $((BASEPORT + 2)) ;;
	miekg) echo $((BASEPORT + 3)) ;; batch) echo $((BASEPORT + 4)) ;; fast) echo $((BASEPORT + 5)) ;;
	coredns) echo $((BASEPORT + 6)) ;; fast-nopause) echo $((BASEPORT + 7)) ;; fast@*) echo $((BASEPORT + 8)) ;;
	*) echo "unknown server $1 (knot bind coredns miekg batch fast fast-nopause)" >&2; exit 1 ;;
	esac
}

start_server() { # name -> sets started_pid (runs in this shell, so cleanup sees it)
	local s=$1 port
	port=$(port_of "$s")
	if port_answers "$port"; then
		echo "port $port already answers: stop that server first" >&2
		exit 1
	fi
	case $s in
	knot)
		mkdir -p "$dir/knot"
		write_knot_conf "$dir/knot/knot.conf" "$port" "$dir/example.test.zone"
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
	fast@*) # the base commit's fast server (BASE)
		# shellcheck disable=SC2086
		taskset -c "$SERVER_CPU" "$dir/embedded-base" -zonefile "$dir/example.test.zone" -addr "127.0.0.1:$port" -mode fast ${BASE_FLAGS:-} >"$dir/$s.log" 2>&1 &
		;;
	fast-nopause) # the fast server with ServerConfig.UDPCoalesce 0, for comparison
		taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/example.test.zone" -addr "127.0.0.1:$port" -mode fast -udp-coalesce 0 >"$dir/$s.log" 2>&1 &
		;;
	esac
	await_server "$s" "$port" svc000.example.test
}

run_one() { # round server pid load: prints the run, appends it (or ABORT) to $dir/results
	local round=$1 s=$2 pid=$3 load=$4 port out before after
	port=$(port_of "$s")
	local rate=()
	case $load in fixed | fix-ecs) rate=(-Q "$FIXED_QPS") ;; tcp) rate=(-m tcp) ;; esac
	case $load in *-ecs) rate+=(-E 8:000118000a0102) ;; esac # family 1, source /24, scope 0, address 10.1.2
	stray=$(off_core "$pid")
	before=$(cpu_ticks "$pid")
	sw0=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_start "$pid"; fi
	out=$(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$dir/queries.txt" -l "$DURATION" -c 1 -T 1 -q 200 "${rate[@]}" 2>&1) || true
	after=$(cpu_ticks "$pid" 2>/dev/null) || after=""
	sw1=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_stop "$round" "$s" "$load" "$pid" "$out"; fi
	stray+=$(off_core "$pid")
	local fixed=0
	case $load in fixed | fix-ecs) fixed=1 ;; esac
	record_run "$round" "$s" "$load" "$fixed" "$out" "$before" "$after"
}

# The miekg and batch modes serve UDP only: no tcp row for them.
tcp_capable() { [ "$2" != tcp ] || { [ "$1" != miekg ] && [ "$1" != batch ]; }; }

declare -A pid_of
for s in $SERVERS; do
	start_server "$s"
	pid_of[$s]=$started_pid
done
: >"$dir/results"
header="# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)${base_row:+ against $base_row} $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION}s per run, $ROUNDS rounds"
echo "$header"
for round in $(seq "$ROUNDS"); do
	for load in $LOADS; do
		for s in $(in_order "$round" $SERVERS); do # shellcheck disable=SC2086
			tcp_capable "$s" "$load" || continue
			run_one "$round" "$s" "${pid_of[$s]}" "$load"
		done
	done
done

echo
echo "$header"
echo "median of $ROUNDS rounds (min–max); fixed = $FIXED_QPS q/s over UDP, tcp = saturation over one TCP connection; a row with an aborted round shows why"
printf '%-13s %-10s %26s %24s %28s %22s %24s' server load "q/s" "avg latency us" "CPU us/query" "CPU / Knot's" "switches/1k queries"
if [ -n "$base_row" ]; then printf ' %22s' "CPU / $base_row's"; fi
echo
for load in $LOADS; do
	for s in $SERVERS; do
		if ! tcp_capable "$s" "$load"; then
			printf '%-13s %-10s (serves UDP only)\n' "$s" "$load"
			continue
		fi
		table_row "$s" "$load" knot $base_row
	done
done
profile_table "$SERVERS" "$LOADS"
