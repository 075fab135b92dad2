#!/usr/bin/env bash
# Signed answers (DNSSEC, every query with DO set: dnsperf -D), side by side.
#
# Static names (run.sh's zone and queries, ~10 % for names that do not exist):
#   knot-presigned   Knot 3.2 serving the zone signed once by dnssec-signzone
#                    (NSEC chain, one ECDSA P-256 combined key): no signing per query
#   knot-online      Knot with mod-onlinesign (signs per query; NSEC "black lies")
#   fast / fast-signed   the embedded zone, unsigned and signed online (embedded -sign)
# Dynamic names (dynamic.sh's w, 4 addresses by weight, and g, 2 addresses of
# the client's region from 1,024 /24 prefixes; ECS on every query):
#   knot-geoip       Knot with mod-geoip (mode weighted for w, mode subnet for
#                    g, edns-client-subnet on) and dnssec: on (the module signs
#                    its alternatives with the zone's key when it loads)
#   pdns             PowerDNS 4.7 LUA records, zone secured with pdnsutil
#                    secure-zone (bind backend + its DNSSEC database), packet
#                    and query caches off, so Lua runs and answers are signed live
#   fast-dyn / fast-dyn-signed   the embedded zone with failover's answer
#                    hooks, unsigned and signed online
#
# Loads: saturate and fixed ($FIXED_QPS) on the static names (servers of the
# static group), dyn-sat and dyn-fixed on the dynamic ones. Every server is
# pinned to $SERVER_CPU and dnsperf to $CLIENT_CPU; $ROUNDS rounds, servers
# in order in odd rounds and reversed in even ones; CPU per query from
# /proc/PID/stat. A run that cannot be trusted aborts its row with the reason
# (bench/lib/dnsperf.sh: no answers, SERVFAIL/FORMERR/REFUSED, the fixed rate
# not held within 95-105 %, ...). CPU per query is compared with
# knot-presigned's (static) and knot-geoip's (dynamic).
#
# The signed embedded rows need an embedded binary with -sign; without it
# they are left out with a message.
#
# PROFILE=1 (as run.sh and dynamic.sh, bench/lib/profile.sh; needs perf)
# adds a table of what one query costs each server beyond its CPU time:
# user and system CPU, system calls by kind, context switches.
#
#   bench/dns-vs-peers/signed.sh   # apt-get install knot knot-module-geoip bind9-utils pdns-server pdns-backend-bind dnsperf
#   DURATION=5 ROUNDS=1 SERVERS="knot-presigned knot-online" bench/dns-vs-peers/signed.sh
#   PROFILE=1 LOADS=dyn-fixed SERVERS="knot-geoip fast-dyn-signed" bench/dns-vs-peers/signed.sh
set -euo pipefail

DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
PROFILE=${PROFILE:-}
FIXED_QPS=${FIXED_QPS:-30000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASEPORT=${BASEPORT:-15500}
SERVERS=${SERVERS:-"knot-presigned knot-online fast fast-signed knot-geoip pdns fast-dyn fast-dyn-signed"}
LOADS=${LOADS:-"saturate fixed dyn-sat dyn-fixed"}
for l in $LOADS; do
	case $l in saturate | fixed | dyn-sat | dyn-fixed) ;; *) echo "unknown load $l (saturate fixed dyn-sat dyn-fixed)" >&2; exit 1 ;; esac
done

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
. "$repo/bench/lib/dnsperf.sh"
. "$repo/bench/lib/profile.sh"
dir=$(mktemp -d /tmp/dns-signed.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null || { echo "missing $1 ($2)" >&2; exit 1; }; }
need dnsperf "apt-get install dnsperf"
need taskset util-linux
need go golang
need dig "apt-get install dnsutils"
if [ "$PROFILE" = 1 ]; then profile_check; fi
for s in $SERVERS; do
	case $s in
	knot-presigned) need knotd "apt-get install knot"; need dnssec-signzone "apt-get install bind9-utils" ;;
	knot-online) need knotd "apt-get install knot" ;;
	knot-geoip)
		need keymgr "apt-get install knot"
		ls /usr/lib/*/knot/modules-*/geoip.so >/dev/null 2>&1 || { echo "missing Knot's geoip module (apt-get install knot-module-geoip)" >&2; exit 1; }
		;;
	pdns)
		need pdns_server "apt-get install pdns-server pdns-backend-bind"
		ls /usr/lib/*/pdns/libbindbackend.so >/dev/null 2>&1 || { echo "missing PowerDNS's bind backend (apt-get install pdns-backend-bind)" >&2; exit 1; }
		;;
	fast | fast-signed | fast-dyn | fast-dyn-signed) ;;
	*) echo "unknown server $s (knot-presigned knot-online fast fast-signed knot-geoip pdns fast-dyn fast-dyn-signed)" >&2; exit 1 ;;
	esac
done

(cd "$repo" && go build -o "$dir/embedded" ./bench/dns-vs-peers/embedded)
build_dnsready
embedded_help=$("$dir/embedded" -h 2>&1 || true) # -h exits 2
if ! grep -q -- '-sign' <<<"$embedded_help"; then
	for s in fast-signed fast-dyn-signed; do
		if [[ " $SERVERS " == *" $s "* ]]; then
			echo "# $s left out: this embedded server cannot sign yet (no -sign flag)" >&2
			SERVERS=$(tr ' ' '\n' <<<"$SERVERS" | grep -vx "$s" | tr '\n' ' ')
		fi
	done
fi
clk=$(getconf CLK_TCK)

port_of() {
	case $1 in
	knot-presigned) echo $((BASEPORT + 1)) ;; knot-online) echo $((BASEPORT + 2)) ;;
	fast) echo $((BASEPORT + 3)) ;; fast-signed) echo $((BASEPORT + 4)) ;;
	knot-geoip) echo $((BASEPORT + 5)) ;; pdns) echo $((BASEPORT + 6)) ;;
	fast-dyn) echo $((BASEPORT + 7)) ;; fast-dyn-signed) echo $((BASEPORT + 8)) ;;
	esac
}
group_of() { case $1 in knot-geoip | pdns | fast-dyn*) echo dynamic ;; *) echo static ;; esac; }
load_group() { case $1 in dyn-*) echo dynamic ;; *) echo static ;; esac; }
runs_load() { [ "$(group_of "$1")" = "$(load_group "$2")" ]; }
probe_name() { if [ "$(group_of "$1")" = dynamic ]; then echo w.example.test; else echo svc000.example.test; fi; }

# The static zone and queries (run.sh's), signed once for knot-presigned.
"$dir/embedded" -gen "$dir"
mkdir -p "$dir/presigned"
key=$(dnssec-keygen -q -K "$dir/presigned" -a ECDSAP256SHA256 -f KSK -n ZONE example.test.)
{ cat "$dir/example.test.zone"; cat "$dir/presigned/$key.key"; } >"$dir/presigned/example.test.zone"
dnssec-signzone -q -z -d "$dir/presigned" -o example.test. -e +2592000 -f "$dir/presigned/example.test.signed" "$dir/presigned/example.test.zone" "$dir/presigned/$key" >/dev/null

# The dynamic data (kept equal to dynamic.sh and embedded/dynamic.go).
W=(192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4)
REG=(us eu ap)
declare -A RA=([us]="198.51.100.1 198.51.100.2" [eu]="198.51.100.11 198.51.100.12" [ap]="198.51.100.21 198.51.100.22")
for i in $(seq 0 1023); do echo "10.$((i / 256)).$((i % 256)).0/24 ${REG[$((i % 3))]}"; done >"$dir/nets.txt"
printf 'w.example.test A\ng.example.test A\n' >"$dir/dyn-queries.txt"
soa='@ 30 IN SOA ns1.example.test. hostmaster.example.test. 1 7200 1800 259200 30
@ 30 IN NS ns1.example.test.
ns1 30 IN A 192.0.2.53'
{
	echo "\$ORIGIN example.test."
	echo "$soa"
	for a in "${W[@]}"; do echo "w 30 IN A $a"; done
	for r in "${REG[@]}"; do for a in ${RA[$r]}; do echo "g 30 IN A $a"; done; done
} >"$dir/dynamic.zone"

# Knot geoip: w by weight, g by the client's /24 (its region's 2 addresses;
# any other network gets us, as the embedded hook's default).
mkdir -p "$dir/knot-geoip/db"
{
	echo "w.example.test:"
	for i in "${!W[@]}"; do printf '  - weight: %d\n    A: %s\n' $((i + 1)) "${W[i]}"; done
} >"$dir/knot-geoip/w.conf"
{
	echo "g.example.test:"
	while read -r net reg; do
		set -- ${RA[$reg]}
		printf '  - net: %s\n    A: %s\n    A: %s\n' "$net" "$1" "$2"
	done <"$dir/nets.txt"
	set -- ${RA[us]}
	printf '  - net: 0.0.0.0/0\n    A: %s\n    A: %s\n' "$1" "$2"
} >"$dir/knot-geoip/g.conf"

# PowerDNS: dynamic.sh's LUA records, the zone secured (one ECDSA P-256 CSK).
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
bind-dnssec-db=$dir/pdns/dnssec.db
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

# knot_conf NAME PORT ZONEFILE EXTRA_SERVER EXTRA_TOP EXTRA_ZONE: a Knot
# configuration in $dir/NAME with one worker of each kind.
knot_conf() {
	local d=$dir/$1
	mkdir -p "$d/db"
	cat >"$d/knot.conf" <<CONF
server:
    listen: 127.0.0.1@$2
    rundir: $d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
$4
database:
    storage: $d/db
log:
  - target: stderr
    any: error
policy:
  - id: p
    algorithm: ecdsap256sha256
    single-type-signing: on
    nsec3: off
$5
zone:
  - domain: example.test
    file: $3
$6
CONF
}

start_server() { # name -> started_pid
	local s=$1 port
	port=$(port_of "$s")
	if port_answers "$port"; then echo "port $port already answers: stop that server first" >&2; exit 1; fi
	case $s in
	knot-presigned)
		knot_conf "$s" "$port" "$dir/presigned/example.test.signed" "" "" ""
		taskset -c "$SERVER_CPU" knotd -c "$dir/$s/knot.conf" >"$dir/$s.log" 2>&1 &
		;;
	knot-online)
		knot_conf "$s" "$port" "$dir/example.test.zone" "" "mod-onlinesign:
  - id: o
    policy: p" "    module: mod-onlinesign/o"
		taskset -c "$SERVER_CPU" knotd -c "$dir/$s/knot.conf" >"$dir/$s.log" 2>&1 &
		;;
	knot-geoip)
		knot_conf "$s" "$port" "$dir/dynamic.zone" "    edns-client-subnet: on" "mod-geoip:
  - id: w
    config-file: $dir/knot-geoip/w.conf
    mode: weighted
    ttl: 30
    dnssec: on
    policy: p
  - id: g
    config-file: $dir/knot-geoip/g.conf
    mode: subnet
    ttl: 30
    dnssec: on
    policy: p" "    dnssec-signing: on
    dnssec-policy: p
    zonefile-sync: -1
    zonefile-load: difference-no-serial
    journal-content: all
    module: [mod-geoip/w, mod-geoip/g]"
		# The modules load the zone's keys when they start: make them first.
		keymgr -c "$dir/$s/knot.conf" example.test. generate algorithm=ecdsap256sha256 ksk=yes zsk=yes >/dev/null
		taskset -c "$SERVER_CPU" knotd -c "$dir/$s/knot.conf" >"$dir/$s.log" 2>&1 &
		;;
	pdns)
		pdnsutil --config-dir="$dir/pdns" create-bind-db "$dir/pdns/dnssec.db" >/dev/null 2>&1
		pdnsutil --config-dir="$dir/pdns" secure-zone example.test >/dev/null 2>&1
		taskset -c "$SERVER_CPU" pdns_server --config-dir="$dir/pdns" >"$dir/pdns.log" 2>&1 &
		;;
	fast | fast-signed)
		local sign=()
		[ "$s" = fast-signed ] && sign=(-sign)
		# shellcheck disable=SC2086 # FAST_FLAGS: extra flags for the embedded server
		taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/example.test.zone" -addr "127.0.0.1:$port" -mode fast "${sign[@]}" ${FAST_FLAGS:-} >"$dir/$s.log" 2>&1 &
		;;
	fast-dyn | fast-dyn-signed)
		local sign=()
		[ "$s" = fast-dyn-signed ] && sign=(-sign)
		# shellcheck disable=SC2086
		taskset -c "$SERVER_CPU" "$dir/embedded" -zonefile "$dir/dynamic.zone" -nets "$dir/nets.txt" -addr "127.0.0.1:$port" -mode fast "${sign[@]}" ${FAST_FLAGS:-} >"$dir/$s.log" 2>&1 &
		;;
	esac
	await_server "$s" "$port" "$(probe_name "$s")"
}

ecs_of() { # round -> dnsperf -E value: family 1, /24, scope 0, the prefix's 3 bytes
	local i=$((($1 * 37) % 1024))
	printf '8:00011800%02x%02x%02x' 10 $((i / 256)) $((i % 256))
}

run_one() { # round server pid load
	local round=$1 s=$2 pid=$3 load=$4 port out before after
	port=$(port_of "$s")
	local args=(-D) queries=$dir/queries.txt fixed=0
	case $load in fixed | dyn-fixed) args+=(-Q "$FIXED_QPS"); fixed=1 ;; esac
	case $load in dyn-*) queries=$dir/dyn-queries.txt; args+=(-E "$(ecs_of "$round")") ;; esac
	stray=$(off_core "$pid")
	before=$(cpu_ticks "$pid")
	sw0=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_start "$pid"; fi
	out=$(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$queries" -l "$DURATION" -c 1 -T 1 -q 200 "${args[@]}" 2>&1) || true
	after=$(cpu_ticks "$pid" 2>/dev/null) || after=""
	sw1=$(ctx_switches "$pid")
	if [ "$PROFILE" = 1 ]; then profile_stop "$round" "$s" "$load" "$pid" "$out"; fi
	stray+=$(off_core "$pid")
	record_run "$round" "$s" "$load" "$fixed" "$out" "$before" "$after"
}

declare -A pid_of
for s in $SERVERS; do
	start_server "$s"
	pid_of[$s]=$started_pid
done
# Before measuring: every signed server signs (an RRSIG beside the answer
# to a DO query), and every dynamic one answers g by the subnet (a client
# of 10.0.1.0/24 is eu's).
for s in $SERVERS; do
	case $s in fast | fast-dyn) ;; *)
		n=$(dig +dnssec +norec -p "$(port_of "$s")" @127.0.0.1 "$(probe_name "$s")" A 2>/dev/null | grep -c 'IN[[:space:]]*RRSIG' || true)
		[ "$n" -gt 0 ] || { echo "$s answers $(probe_name "$s") without an RRSIG" >&2; exit 1; }
		;;
	esac
	[ "$(group_of "$s")" = dynamic ] || continue
	got=$(dig +short +subnet=10.0.1.0/24 -p "$(port_of "$s")" @127.0.0.1 g.example.test A 2>/dev/null | sort | tr '\n' ' ' || true)
	[ "$got" = "198.51.100.11 198.51.100.12 " ] || { echo "$s answers g.example.test for 10.0.1.0/24 with '$got', want eu's two addresses" >&2; exit 1; }
done

: >"$dir/results"
header="# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown) $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION}s per run, $ROUNDS rounds, DO on every query"
echo "$header"
for round in $(seq "$ROUNDS"); do
	for load in $LOADS; do
		for s in $(in_order "$round" $SERVERS); do # shellcheck disable=SC2086
			if runs_load "$s" "$load"; then run_one "$round" "$s" "${pid_of[$s]}" "$load"; fi
		done
	done
done

echo
echo "$header"
echo "median of $ROUNDS rounds (min–max); fixed = $FIXED_QPS q/s; CPU ratio to knot-presigned (static loads) or knot-geoip (dyn-*); a row with an aborted round shows why"
printf '%-16s %-10s %26s %24s %28s %22s %24s\n' server load "q/s" "avg latency us" "CPU us/query" "CPU / base" "switches/1k queries"
for load in $LOADS; do
	base=knot-presigned
	[ "$(load_group "$load")" = dynamic ] && base=knot-geoip
	for s in $SERVERS; do
		if runs_load "$s" "$load"; then table_row "$s" "$load" "$base"; fi
	done
done
profile_table "$SERVERS" "$LOADS"
