#!/usr/bin/env bash
# Dynamic answers: names answered per query, by weight and by client
# subnet, from gslbkit's embedded zone with failover's answer hooks, gdnsd
# 3.8 (weighted and geoip plugins) and PowerDNS Authoritative 4.7 (LUA
# records, packet and query caches off so Lua runs), with Knot serving the
# same names statically as the floor.
#
#   w.example.test: 4 addresses, weights 1/2/3/4, one answered per query
#   g.example.test: 1,024 /24 prefixes (10.0.0.0/24 ... 10.3.255.0/24)
#                   mapped to 3 regions of 2 addresses (prefix i -> i mod 3)
#   k.example.test: 4 addresses, one per client network (the loads sticky
#                   and sticky-fix): failover.Sticky(24, 56), rendezvous
#                   hashing of the client's /24, beside gdnsd's geoip with a
#                   nets map listing, for each of the 1,024 /24s, the 4
#                   addresses in the order Sticky chooses them (written by
#                   embedded -sticky-ranks), so both answer every network
#                   alike and fail over in the same order; Knot serves the 4
#                   statically as the floor; PowerDNS has no row
#
# dnsperf alternates w and g (loads saturate and fixed), or asks k alone
# (sticky and sticky-fix), with one EDNS Client Subnet option per run (-E;
# round r uses 10.(r*37 mod 1024 as a /24)), so the geo and sticky choices
# are exercised through ECS; every server is pinned to core $SERVER_CPU and
# dnsperf to $CLIENT_CPU, at saturation and at $FIXED_QPS, $ROUNDS times.
#
#   bench/dns-vs-peers/dynamic.sh     # apt-get install knot gdnsd pdns-server pdns-backend-bind dnsperf
#   DURATION=2 ROUNDS=1 SERVERS="fast gdnsd" bench/dns-vs-peers/dynamic.sh
#   LOADS="sticky sticky-fix" SERVERS="gdnsd fast" bench/dns-vs-peers/dynamic.sh   # the sticky rows only
#   FAST_FLAGS="-udp-coalesce 0" bench/dns-vs-peers/dynamic.sh   # flags for the embedded server
#   BASE=main bench/dns-vs-peers/dynamic.sh   # head against a base commit, in the same run
#
# BASE=<commit> builds the embedded server of that commit too (in a
# temporary git worktree, removed once built) and runs it as one more
# server, fast@<short commit>, with BASE_FLAGS (default: FAST_FLAGS),
# interleaved round by round with the others; the table then shows, beside
# CPU / gdnsd's, each row's CPU per query relative to the base's (per
# round, then summarised): head ÷ base on the fast row.
#
# Prints one line per run and the table of medians (min–max) with CPU per
# query relative to gdnsd's. A run that cannot be trusted aborts its row
# with the reason (as run.sh does).
set -euo pipefail

DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
PROFILE=${PROFILE:-}
FIXED_QPS=${FIXED_QPS:-30000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASEPORT=${BASEPORT:-15400}
SERVERS=${SERVERS:-"knot gdnsd pdns fast"}
BASE=${BASE:-}
BASE_FLAGS=${BASE_FLAGS-${FAST_FLAGS:-}}
LOADS=${LOADS:-"saturate fixed sticky sticky-fix"}
for l in $LOADS; do
	case $l in saturate | fixed | sticky | sticky-fix) ;; *) echo "unknown load $l (saturate fixed sticky sticky-fix)" >&2; exit 1 ;; esac
done

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
. "$repo/bench/lib/dnsperf.sh"
. "$repo/bench/lib/profile.sh"
dir=$(mktemp -d /tmp/dns-dynamic.XXXXXX)
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

need() { command -v "$1" >/dev/null || { echo "missing $1 ($2)" >&2; exit 1; }; }
need dnsperf "apt-get install dnsperf"
need taskset util-linux
need go golang
for s in $SERVERS; do
	case $s in
	knot) need knotd "apt-get install knot" ;;
	gdnsd) need gdnsd "apt-get install gdnsd" ;;
	pdns) need pdns_server "apt-get install pdns-server pdns-backend-bind" ;;
	fast) ;;
	*) echo "unknown server $s (knot gdnsd pdns fast)" >&2; exit 1 ;;
	esac
done
# The base commit's embedded server: one more server, fast@<short>.
base_row=""
if [ -n "$BASE" ]; then
	short=$(git -C "$repo" rev-parse --short "$BASE^{commit}") || { echo "BASE=$BASE is not a commit" >&2; exit 1; }
	base_row="fast@$short"
	SERVERS="$SERVERS $base_row"
fi

port_of() { case $1 in knot) echo $((BASEPORT + 1)) ;; gdnsd) echo $((BASEPORT + 2)) ;; pdns) echo $((BASEPORT + 3)) ;; fast) echo $((BASEPORT + 4)) ;; fast@*) echo $((BASEPORT + 5)) ;; esac; }

# The data: addresses (kept equal to embedded/dynamic.go), the prefix table.
W=(192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4)
K=(192.0.2.21 192.0.2.22 192.0.2.23 192.0.2.24)
REG=(us eu ap)
declare -A RA=([us]="198.51.100.1 198.51.100.2" [eu]="198.51.100.11 198.51.100.12" [ap]="198.51.100.21 198.51.100.22")
for i in $(seq 0 1023); do echo "10.$((i / 256)).$((i % 256)).0/24 ${REG[$((i % 3))]}"; done >"$dir/nets.txt"
printf 'w.example.test A\ng.example.test A\n' >"$dir/queries.txt"
printf 'k.example.test A\n' >"$dir/sticky.txt"
if [ "$PROFILE" = 1 ]; then profile_check; fi
(cd "$repo" && go build -o "$dir/embedded" ./bench/dns-vs-peers/embedded)
build_dnsready
if [ -n "$base_row" ]; then
	git -C "$repo" worktree add --quiet --detach "$dir/base-src" "$BASE"
	(cd "$dir/base-src" && go build -o "$dir/embedded-base" ./bench/dns-vs-peers/embedded)
	git -C "$repo" worktree remove --force "$dir/base-src"
fi
# The sticky name's choice per network, in order (Sticky's first choice,
# then its choice once that one is gone, ...): gdnsd's nets map for k.
"$dir/embedded" -nets "$dir/nets.txt" -sticky-ranks "$dir/sticky-ranks.txt"
soa='@ 30 IN SOA ns1.example.test. hostmaster.example.test. 1 7200 1800 259200 30
@ 30 IN NS ns1.example.test.
ns1 30 IN A 192.0.2.53'

# Knot and the embedded zone: the static records (the hooks choose among them).
{
	echo "\$ORIGIN example.test."
	echo "$soa"
	for a in "${W[@]}"; do echo "w 30 IN A $a"; done
	for a in "${K[@]}"; do echo "k 30 IN A $a"; done
	for r in "${REG[@]}"; do for a in ${RA[$r]}; do echo "g 30 IN A $a"; done; done
} >"$dir/example.test.zone"

# gdnsd: weighted (one address per answer) and geoip with a nets map; k is
# geoip too, each network's datacenters (one address each) in Sticky's order.
mkdir -p "$dir/gdnsd/zones" "$dir/gdnsd/run" "$dir/gdnsd/state"
{
	echo "options => { listen => [ 127.0.0.1:$(port_of gdnsd) ], run_dir => $dir/gdnsd/run, state_dir => $dir/gdnsd/state, udp_threads => 1, tcp_threads => 1 }"
	echo "plugins => {"
	echo "  weighted => { w => { a1 => [ ${W[0]}, 1 ], a2 => [ ${W[1]}, 2 ], a3 => [ ${W[2]}, 3 ], a4 => [ ${W[3]}, 4 ] } }"
	echo "  geoip => { maps => { m => { datacenters => [ us, eu, ap ], nets => {"
	awk '{ pref = ($2 == "us") ? "us, eu, ap" : ($2 == "eu") ? "eu, us, ap" : "ap, eu, us"; print "    " $1 " => [ " pref " ]" }' "$dir/nets.txt"
	echo "  } }"
	echo "  s => { datacenters => [ k1, k2, k3, k4 ], nets => {"
	awk -v k="${K[*]}" 'BEGIN { n = split(k, a, " "); for (i = 1; i <= n; i++) dc[a[i]] = "k" i }
		{ printf "    %s => [ %s, %s, %s, %s ]\n", $1, dc[$2], dc[$3], dc[$4], dc[$5] }' "$dir/sticky-ranks.txt"
	echo "  } } }"
	printf '  resources => { g => { map => m, dcmap => {'
	for r in "${REG[@]}"; do set -- ${RA[$r]}; printf ' %s => [ %s, %s ]' "$r" "$1" "$2"; done
	printf ' } }, k => { map => s, dcmap => {'
	for i in "${!K[@]}"; do printf ' k%d => %s' $((i + 1)) "${K[i]}"; done
	echo ' } } } }'
	echo "}"
} >"$dir/gdnsd/config"
printf '%s\nw 30 DYNA weighted!w\ng 30 DYNA geoip!g\nk 30 DYNA geoip!k\n' "$soa" | sed 's/^@ 30 IN SOA/$TTL 30\n@ 30 IN SOA/' >"$dir/gdnsd/zones/example.test"

# PowerDNS: bind backend, LUA records (pickwrandom; netmask() per region in
# a Lua block), every cache off.
mkdir -p "$dir/pdns"
{
	echo "\$ORIGIN example.test."
	echo "$soa"
	echo "w 30 IN LUA A \"pickwrandom({{1,'${W[0]}'},{2,'${W[1]}'},{3,'${W[2]}'},{4,'${W[3]}'}})\""
	printf 'g 30 IN LUA A ";'
	for r in "${REG[@]}"; do
		set -- ${RA[$r]}
		printf "if netmask({%s}) then return {'%s','%s'} end " "$(awk -v r="$r" '$2 == r { printf "%s'\''%s'\''", (n++ ? "," : ""), $1 }' "$dir/nets.txt")" "$1" "$2"
	done
	set -- ${RA[us]}
	printf "return {'%s','%s'}\"\n" "$1" "$2"
} >"$dir/pdns/example.test.zone"
echo "zone \"example.test\" { type master; file \"$dir/pdns/example.test.zone\"; };" >"$dir/pdns/named.conf"
cat >"$dir/pdns/pdns.conf" <<CONF
launch=bind
bind-config=$dir/pdns/named.conf
local-address=127.0.0.1
local-port=$(port_of pdns)
enable-lua-records=yes
edns-subnet-processing=yes
cache-ttl=0
query-cache-ttl=0
negquery-cache-ttl=0
zone-cache-refresh-interval=0
daemon=no
guardian=no
disable-syslog=yes
socket-dir=$dir/pdns
receiver-threads=1
distributor-threads=1
loglevel=3
CONF

clk=$(getconf CLK_TCK)


start_server() { # name -> started_pid
	local s=$1 port
	port=$(port_of "$s")
	if port_answers "$port"; then echo "port $port already answers: stop that server first" >&2; exit 1; fi
	case $s in
	knot)
		mkdir -p "$dir/knot"
		write_knot_conf "$dir/knot/knot.conf" "$port" "$dir/example.test.zone"
		taskset -c "$SERVER_CPU" knotd -c "$dir/knot/knot.conf" >"$dir/knot.log" 2>&1 &
		;;
	gdnsd) taskset -c "$SERVER_CPU" gdnsd -c "$dir/gdnsd" start >"$dir/gdnsd.log" 2>&1 & ;;
	pdns) taskset -c "$SERVER_CPU" pdns_server --config-dir="$dir/pdns" >"$dir/pdns.log" 2>&1 & ;;
	fast) taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/example.test.zone" -nets "$dir/nets.txt" -addr "127.0.0.1:$port" -mode fast ${FAST_FLAGS:-} >"$dir/fast.log" 2>&1 & ;; # shellcheck disable=SC2086
	fast@*) taskset -c "$SERVER_CPU" "$dir/embedded-base" -zonefile "$dir/example.test.zone" -nets "$dir/nets.txt" -addr "127.0.0.1:$port" -mode fast ${BASE_FLAGS:-} >"$dir/$s.log" 2>&1 & ;; # shellcheck disable=SC2086
	esac
	await_server "$s" "$port" w.example.test
}

ecs_of() { # round -> dnsperf -E value: family 1, /24, scope 0, the prefix's 3 bytes
	local i=$((($1 * 37) % 1024))
	printf '8:00011800%02x%02x%02x' 10 $((i / 256)) $((i % 256))
}

run_one() { # round server pid load
	local round=$1 s=$2 pid=$3 load=$4 port out before after
	port=$(port_of "$s")
	local rate=() queries=$dir/queries.txt
	case $load in fixed | sticky-fix) rate=(-Q "$FIXED_QPS") ;; esac
	case $load in sticky | sticky-fix) queries=$dir/sticky.txt ;; esac
	stray=$(off_core "$pid")
	before=$(cpu_ticks "$pid")
	sw0=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_start "$pid"; fi
	out=$(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$queries" -l "$DURATION" -c 1 -T 1 -q 200 -E "$(ecs_of "$round")" "${rate[@]}" 2>&1) || true
	after=$(cpu_ticks "$pid" 2>/dev/null) || after=""
	sw1=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_stop "$round" "$s" "$load" "$pid" "$out"; fi
	stray+=$(off_core "$pid")
	local fixed=0
	if [ ${#rate[@]} -gt 0 ]; then fixed=1; fi
	record_run "$round" "$s" "$load" "$fixed" "$out" "$before" "$after"
}

declare -A pid_of
for s in $SERVERS; do
	start_server "$s"
	pid_of[$s]=$started_pid
done
# Every server answers the geo name by the subnet: a client of 10.0.1.0/24 (eu).
for s in $SERVERS; do
	[ "$s" = knot ] && continue
	got=$(dig +short +subnet=10.0.1.0/24 -p "$(port_of "$s")" @127.0.0.1 g.example.test A 2>/dev/null | sort | tr '\n' ' ' || true)
	[ "$got" = "198.51.100.11 198.51.100.12 " ] || { echo "$s answers g.example.test for 10.0.1.0/24 with '$got', want eu's two addresses" >&2; exit 1; }
done
# ... and the sticky name by the network as Sticky chooses (first, middle
# and last of the networks, and the rounds' own).
sticky_server() { [ "$1" = gdnsd ] || [ "$1" = fast ] || [ "$1" = "$base_row" ]; }
# Checked only when a sticky load runs (a base commit older than the
# sticky step answers k.example.test with every address).
sticky_loads=0
for l in $LOADS; do case $l in sticky | sticky-fix) sticky_loads=1 ;; esac; done
for s in $SERVERS; do
	[ "$sticky_loads" = 1 ] || break
	sticky_server "$s" || continue
	for i in 0 1 511 1023 $(for r in $(seq "$ROUNDS"); do echo $(((r * 37) % 1024)); done); do
		net="10.$((i / 256)).$((i % 256)).0/24"
		want=$(awk -v n="$net" '$1 == n { print $2 }' "$dir/sticky-ranks.txt")
		got=$(dig +short +subnet="$net" -p "$(port_of "$s")" @127.0.0.1 k.example.test A 2>/dev/null || true)
		[ -n "$want" ] && [ "$got" = "$want" ] || { echo "$s answers k.example.test for $net with '$got', want Sticky's $want" >&2; exit 1; }
	done
done
: >"$dir/results"
header="# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)${base_row:+ against $base_row} $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION}s per run, $ROUNDS rounds, ECS on every query"
echo "$header"
# The sticky loads run on the servers that have an equivalent (and Knot,
# the static floor).
runs_load() { case $2 in sticky | sticky-fix) [ "$1" != pdns ] ;; esac; }
for round in $(seq "$ROUNDS"); do
	for load in $LOADS; do
		for s in $(in_order "$round" $SERVERS); do # shellcheck disable=SC2086
			if runs_load "$s" "$load"; then run_one "$round" "$s" "${pid_of[$s]}" "$load"; fi
		done
	done
done

echo
echo "$header"
echo "median of $ROUNDS rounds (min–max); fixed = $FIXED_QPS q/s; a row with an aborted round shows why"
printf '%-13s %-10s %26s %24s %28s %22s %24s' server load "q/s" "avg latency us" "CPU us/query" "CPU / gdnsd's" "switches/1k queries"
if [ -n "$base_row" ]; then printf ' %22s' "CPU / $base_row's"; fi
echo
for load in $LOADS; do
	for s in $SERVERS; do
		if runs_load "$s" "$load"; then table_row "$s" "$load" gdnsd $base_row; fi
	done
done
profile_table "$SERVERS" "$LOADS"
