#!/usr/bin/env bash
# Scale run: the embedded zone (fast mode) beside Knot, and with
# SERVERS="knot fast bind" BIND 9, on zones of 10k, 100k and 1M names (see
# README.md, "Scale"). ROUNDS rounds; in each, every size in turn, and for
# each size every server in SERVERS in turn (in order in odd rounds,
# reversed in even ones), alone on the machine's server core:
#
#   1. started with the zone's SOA and NS only: its RSS (the empty server),
#      and again after DURATION seconds of saturating queries for its one
#      name (the busy empty server: what serving adds whatever the zone);
#   2. started with the zone: the time until it answers, wall and CPU;
#      its RSS then (RSS per record = (RSS - empty RSS) / records);
#   3. dnsperf from the client core: uniform and Zipf-like queries, at
#      saturation and at FIXED_QPS, DURATION seconds each: CPU per query;
#      then its RSS again, per record against the idle empty server ("B/rec
#      after") and against the busy one ("B/rec vs busy");
#   4. a fresh Knot secondary transfers the zone (AXFR): the seconds the
#      secondary's log reports for its refresh ("zone updated, N seconds":
#      the SOA query, the wait for the first message, the transfer, the
#      zone built) and for the messages alone ("AXFR ... finished, N
#      seconds", counted from the first message); a refresh that failed
#      first and was retried aborts the row;
#   5. 1,000 changes in one write on the server (embedded: SIGUSR1 with
#      -changes; Knot: one knotc transaction; BIND: one dynamic update
#      message from nsupdate, signed with a TSIG key, kept in the zone's
#      journal), the secondary refreshed: the same two figures for the IXFR
#      (changes the server did not take, or a refresh that falls back to
#      AXFR, abort the row).
#
# BIND (named -n 1: one worker thread) is a primary as Knot's is: transfers
# allowed to 127.0.0.0/8, no NOTIFY (the secondary is refreshed with
# knotc), its journal the IXFR's source; it writes updates back to its zone
# file, so it loads a copy, made before its clock starts (write_bind_conf
# in bench/lib/xfr.sh says what else is set and why). It is not in the
# default SERVERS: the default run is the one the embedded server's goals
# against Knot are read from, and BIND would lengthen it (its load of 1M
# names alone takes several times Knot's).
#
# The secondary waits up to LOAD_TIMEOUT for each message of a transfer
# (Knot's tcp-remote-io-timeout, 5 s by default): the embedded server of
# commits before the streamed AXFR sent its first message only once it had
# listed the whole zone, longer than 5 s at 1M names (see README.md), and a
# secondary on a busy machine may pause that long between messages. The Knot
# primary waits 30 s for each message to be taken (tcp-io-timeout, 0.5 s
# by default; the embedded server's per-message write deadline is 30 s):
# with the default, a secondary that paused for half a second on a busy
# machine had its AXFR reset, at 10k names as at 1M.
#
# The time until a server answers (step 2, "load s") runs from just before
# its start to the first reply, NOERROR with an address, to
# ns1.example.test: dnsready (built from ./dnsready) asks every 5 ms from
# the client core on a connected UDP socket, so a query sent before the
# server bound its port comes back refused at once and is asked again
# (the figure is the server's to within 5 ms), for Knot and the embedded
# server alike. Before, the probe was dnsperf with its 1 s timeout (-t 1):
# the embedded server binds its port only once its zone is loaded, so the
# first probe was lost and waited out that second: its load times at 10k
# and 100k names read 1.14-1.15 s whatever the size (CPU 0.05 and
# 0.25 s), and Knot's at 10k names did so in one round of three
# (0.09-1.16 s). On a busy machine the wall time also holds the time the
# server waited for its core: the line "loaded in" says how long
# (waiting for a CPU, from /proc/PID/task/*/schedstat).
# The start-up of a primary and of the Knot secondary, and the reading of
# the secondary's log, are bench/lib/xfr.sh's (xfrside.sh uses them too).
#
# A figure that cannot be trusted aborts its row with a message and no
# figure (the rules of run.sh, and: a server that did not answer within
# LOAD_TIMEOUT, a transfer the secondary's log does not report as finished).
#
#   bench/dns-vs-peers/scale.sh              # 10k, 100k, 1M names, 3 rounds
#   QUICK=1 bench/dns-vs-peers/scale.sh      # 10k names, 1 round, 5 s runs
#   LOAD=append bench/dns-vs-peers/scale.sh  # the embedded server loads with AppendRecords
#   SIZES="100000" ROUNDS=3 bench/dns-vs-peers/scale.sh
#   SERVERS="knot fast bind" SIZES="10000 100000" bench/dns-vs-peers/scale.sh
set -euo pipefail

if [ -n "${QUICK:-}" ]; then
	SIZES=${SIZES:-10000}
	ROUNDS=${ROUNDS:-1}
	DURATION=${DURATION:-5}
	QUERIES=${QUERIES:-200000}
fi
SIZES=${SIZES:-"10000 100000 1000000"}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
QUERIES=${QUERIES:-1000000}
FIXED_QPS=${FIXED_QPS:-30000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BASEPORT=${BASEPORT:-15600}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-900} # seconds: loading, and each transfer
SERVERS=${SERVERS:-"knot fast"} # any of knot fast bind; knot's figures are the ratios' base
LOAD=${LOAD:-build} # the embedded server's -load: build (SnapshotBuilder) or append (AppendRecords)
LOADS="uni-sat uni-fix zipf-sat zipf-fix"

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/bench/lib/stats.sh"
. "$repo/bench/lib/dnsperf.sh"
. "$repo/bench/lib/xfr.sh"
dir=$(mktemp -d /tmp/dns-scale.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

for cmd in dnsperf taskset go knotd knotc dig; do
	command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install dnsperf knot knot-dnsutils dnsutils)" >&2; exit 1; }
done
for s in $SERVERS; do
	case $s in
	knot | fast) ;;
	bind)
		for cmd in named nsupdate tsig-keygen; do
			command -v "$cmd" >/dev/null || { echo "missing $cmd (apt-get install bind9 bind9-dnsutils bind9-utils)" >&2; exit 1; }
		done
		;;
	*) echo "unknown server $s (knot fast bind)" >&2; exit 1 ;;
	esac
done
[ -z "${GOMEMLIMIT:-}" ] || echo "# note: GOMEMLIMIT=$GOMEMLIMIT is set" >&2
build_xfr_tools
clk=$(getconf CLK_TCK)
port=$((BASEPORT + 1))
secport=$((BASEPORT + 2))
sec=$dir/sec # the secondary's directory and log (start_secondary)
bind_update_key "$dir/update.key" # BIND's changes are signed with it (apply_changes)

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
serial_at() { dig +short +time=1 +tries=1 @127.0.0.1 -p "$1" example.test SOA 2>/dev/null | awk '{print $3}'; }

# start_primary SERVER ZONEFILE: starts it pinned on $port (start_server);
# sets started_pid, and load_wall and load_cpu: the seconds from its start
# until it answers ns1.example.test (await_answer), and the CPU seconds it
# used by then, and load_wait, the seconds it waited for a CPU by then
# (cpu_wait); load_wall="" when it did not answer within LOAD_TIMEOUT.
start_primary() {
	local s=$1 zf=$2 t0 bin=$1 args=()
	if port_answers "$port"; then
		echo "port $port already answers: stop that server first" >&2
		exit 1
	fi
	case $s in
	knot) ;;
	bind)
		# BIND writes its changes back to the zone file it loaded: a copy,
		# made before the clock starts.
		cp "$zf" "$dir/bind.zone"
		zf=$dir/bind.zone args=("$dir/update.key")
		;;
	fast) bin=$dir/embedded args=(-load "$LOAD" -changes "$changes") ;;
	esac
	t0=$(now)
	start_server "$s" "$bin" "$port" "$zf" "${args[@]}"
	load_wall="" load_cpu="" load_wait=""
	if await_answer "$port" "$started_pid"; then
		load_cpu=$(awk -v t="$(cpu_ticks "$started_pid")" -v c="$clk" 'BEGIN {printf "%.3f", t / c}')
		load_wall=$(awk -v a="$t0" -v b="$answered_at" 'BEGIN {printf "%.3f", b - a}')
		load_wait=$(cpu_wait "$started_pid")
		taskset -a -p -c "$SERVER_CPU" "$started_pid" >/dev/null
	fi
}

stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# wait_serial PORT SERIAL: waits (LOAD_TIMEOUT at most) until the server on
# PORT answers the zone's SOA with SERIAL; fails otherwise.
wait_serial() {
	local end=$((SECONDS + LOAD_TIMEOUT))
	while ((SECONDS < end)); do
		[ "$(serial_at "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# apply_changes SERVER PID: the 1,000 changes in one write; fails when the
# server did not take them ($dir/apply.out says why).
apply_changes() {
	rm -f "$dir/apply.out"
	case $1 in
	knot)
		{
			echo "zone-begin example.test"
			awk '{ print "zone-unset example.test", $1, $3; print "zone-set example.test", $1, $2, $3, $4 }' "$changes"
			echo "zone-commit example.test"
		} | knotc -s "$dir/knot/knot.sock" >"$dir/apply.out" 2>&1
		;;
	bind)
		# One UPDATE message (RFC 2136; nsupdate sends it over TCP, too
		# large for UDP), signed with the key BIND takes updates with.
		{
			echo "server 127.0.0.1 $port"
			echo "zone example.test"
			awk '{ print "update delete", $1 ".example.test.", $3; print "update add", $1 ".example.test.", $2, $3, $4 }' "$changes"
			echo "send"
		} | nsupdate -k "$dir/update.key" >"$dir/apply.out" 2>&1
		;;
	fast) kill -USR1 "$2" ;;
	esac
}

abort() { # round server size load why
	echo "ABORT $1 $2 $3 $4 $5" >>"$dir/results"
	printf '%-6s %-8s %-9s row aborted (round %d): %s\n' "$2" "$3" "$4" "$1" "$5"
}
put() { # round server size what value
	echo "$1 $2 $3 $4 $5" >>"$dir/results"
}

run_load() { # round server size pid load
	local r=$1 s=$2 n=$3 pid=$4 load=$5 out before after qf rate=()
	case $load in uni-*) qf=$sizedir/uniform.txt ;; *) qf=$sizedir/zipf.txt ;; esac
	case $load in *-fix) rate=(-Q "$FIXED_QPS") ;; esac
	stray=$(off_core "$pid")
	before=$(cpu_ticks "$pid")
	sw0=$(ctx_switches "$pid")
	out=$(taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$qf" -l "$DURATION" -c 1 -T 1 -q 200 "${rate[@]}" 2>&1) || true
	after=$(cpu_ticks "$pid" 2>/dev/null) || after=""
	sw1=$(ctx_switches "$pid")
	stray+=$(off_core "$pid")
	local fixed=0
	[[ $load == *-fix ]] && fixed=1
	# record_run keys its lines by server and load: the size goes with the server.
	record_run "$r" "$s@$n" "$load" "$fixed" "$out" "$before" "$after"
}

: >"$dir/results"
header="# $(date -u +%FT%TZ) $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown) $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); ${DURATION}s per run, $ROUNDS rounds, $QUERIES queries per file, GOMEMLIMIT ${GOMEMLIMIT:-unset}, GOGC ${GOGC:-default}, embedded -load $LOAD"
[[ " $SERVERS " != *" bind "* ]] || header+=", $(named -v)"
echo "$header"
# Every size's zone and queries first; then the rounds, each serving every
# size in turn. A run takes minutes per size, and this machine's speed
# drifts over minutes (a server's CPU per query moved by 10-20 % between
# sizes run ten minutes apart, for Knot as for us): with the sizes of a
# round next to each other, the flatness lines compare figures taken close
# in time.
for n in $SIZES; do
	mkdir -p "$dir/z$n"
	"$dir/zonegen" -names "$n" -queries "$QUERIES" -dir "$dir/z$n"
	echo "# $n names, $(cat "$dir/z$n/records") records"
done
for round in $(seq "$ROUNDS"); do
	for n in $SIZES; do
		sizedir=$dir/z$n
		changes=$sizedir/changes.txt
		records=$(cat "$sizedir/records")
		for s in $(in_order "$round" $SERVERS); do # shellcheck disable=SC2086
			start_primary "$s" "$sizedir/empty.zone"
			if [ -z "$load_wall" ]; then
				for w in rss rss-after rss-after-busy; do abort "$round" "$s" "$n" "$w" "the empty server did not answer"; done
				stop_pid "$started_pid"
				continue
			fi
			empty=$(rss_kb "$started_pid")
			# The empty server again after DURATION seconds of saturating
			# queries for its one name: what serving adds whatever the zone
			# (receive and send buffers, threads), the baseline of "B/rec vs
			# busy".
			printf 'ns1.example.test A\n' >"$sizedir/empty.txt"
			taskset -c "$CLIENT_CPU" dnsperf -s 127.0.0.1 -p "$port" -d "$sizedir/empty.txt" -l "$DURATION" -c 1 -T 1 -q 200 >/dev/null 2>&1 || true
			empty_busy=$(rss_kb "$started_pid")
			stop_pid "$started_pid"
			start_primary "$s" "$sizedir/scale.zone"
			pid=$started_pid
			if [ -z "$load_wall" ]; then
				for w in load rss rss-after rss-after-busy $LOADS axfr axfr-data ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "the server did not answer within ${LOAD_TIMEOUT}s (log: $(tail -n 1 "$dir/$s.log" 2>/dev/null))"; done
				stop_pid "$pid"
				continue
			fi
			loaded=$(rss_kb "$pid")
			put "$round" "$s" "$n" load "$load_wall"
			put "$round" "$s" "$n" loadcpu "$load_cpu"
			put "$round" "$s" "$n" rss "$(awk -v a="$loaded" -v e="$empty" -v r="$records" 'BEGIN {printf "%.1f", (a - e) * 1024 / r}')"
			printf '%-6s %-8s loaded in %s s (%s s CPU, %s s waiting for a CPU), RSS %d kB (empty %d kB, %d kB after its queries)\n' "$s" "$n" "$load_wall" "$load_cpu" "$load_wait" "$loaded" "$empty" "$empty_busy"
			for load in $LOADS; do
				run_load "$round" "$s" "$n" "$pid" "$load"
			done
			steady=$(rss_kb "$pid")
			put "$round" "$s" "$n" rss-after "$(awk -v a="$steady" -v e="$empty" -v r="$records" 'BEGIN {printf "%.1f", (a - e) * 1024 / r}')"
			put "$round" "$s" "$n" rss-after-busy "$(awk -v a="$steady" -v e="$empty_busy" -v r="$records" 'BEGIN {printf "%.1f", (a - e) * 1024 / r}')"
			serial=$(serial_at "$port")
			start_secondary "$sec" "$secport" "$port"
			if ! wait_serial "$secport" "$serial" || [ -z "$(xfr_seconds AXFR "$sec/log")" ] || [ -z "$(refresh_seconds none "$serial" "$sec/log")" ]; then
				for w in axfr axfr-data; do abort "$round" "$s" "$n" "$w" "the secondary did not report a finished AXFR of serial $serial: $(grep -E 'AXFR|error' "$sec/log" | tail -n 1)"; done
				for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "no AXFR before it"; done
			elif [ -n "$(refresh_failed "$sec/log")" ]; then
				for w in axfr axfr-data; do abort "$round" "$s" "$n" "$w" "a refresh failed before the AXFR: $(refresh_failed "$sec/log")"; done
				for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "no clean AXFR before it"; done
			else
				put "$round" "$s" "$n" axfr "$(refresh_seconds none "$serial" "$sec/log")"
				xfr=$(xfr_seconds AXFR "$sec/log")
				put "$round" "$s" "$n" axfr-data "${xfr%% *}"
				if ! apply_changes "$s" "$pid"; then
					for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "the server did not take the changes: $(tail -n 1 "$dir/apply.out" 2>/dev/null)"; done
				elif ! wait_serial "$port" $((serial + 1)); then
					for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "the server did not apply the changes (serial $serial)"; done
				else
					knotc -s "$sec/knot.sock" zone-refresh example.test >/dev/null
					if ! wait_serial "$secport" $((serial + 1)) || [ -z "$(xfr_seconds IXFR "$sec/log")" ] || [ -z "$(refresh_seconds "$serial" $((serial + 1)) "$sec/log")" ]; then
						for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "the secondary did not report a finished IXFR: $(grep -E 'XFR|error' "$sec/log" | tail -n 1)"; done
					elif [ "$(grep -cE 'AXFR, incoming, .*finished' "$sec/log")" -gt 1 ]; then
						for w in ixfr ixfr-data; do abort "$round" "$s" "$n" "$w" "the refresh fell back to AXFR"; done
					else
						put "$round" "$s" "$n" ixfr "$(refresh_seconds "$serial" $((serial + 1)) "$sec/log")"
						xfr=$(xfr_seconds IXFR "$sec/log")
						put "$round" "$s" "$n" ixfr-data "${xfr%% *}"
					fi
				fi
			fi
			stop_pid "$sec_pid"
			stop_pid "$pid"
		done
	done
done

# The tables: per size and server, the median (min–max) of each figure and
# its ratio to Knot's (per round, then summarised).
cell() { # server size what format
	awk -v s="$1" -v n="$2" -v w="$3" '$2 == s && $3 == n && $4 == w { print $5 }' "$dir/results" | mmm | fmt_mmm "$4"
}
ratio() { # server size what
	awk -v s="$1" -v n="$2" -v w="$3" '$3 == n && $4 == w && ($2 == s || $2 == "knot") { v[$1, $2] = $5; r[$1] = 1 }
		END { for (k in r) if (v[k, "knot"] > 0 && v[k, s] != "") print v[k, s] / v[k, "knot"] }' "$dir/results" | mmm | fmt_mmm %.2f
}
why() { # server size what: the first abort message of that row, or nothing
	awk -v s="$1" -v n="$2" -v w="$3" '$1 == "ABORT" && $3 == s && $4 == n && $5 == w { $1 = $3 = $4 = $5 = ""; sub(/^ +/, ""); gsub(/ +/, " "); print "round " $0; exit }' "$dir/results"
}
# record_run wrote "round server@size load qps lat cpu lost sw": the
# figures per query go into the same shape as the others.
awk '$1 ~ /^[0-9]+$/ && $2 ~ /@/ { split($2, a, "@"); print $1, a[1], a[2], $3, $6; print $1, a[1], a[2], $3 "-qps", $4 }
	$1 == "ABORT" && $3 ~ /@/ { split($3, a, "@"); $3 = a[1] " " a[2]; print }' "$dir/results" >"$dir/results.q"
cat "$dir/results.q" >>"$dir/results"

echo
echo "$header"
echo "median of $ROUNDS rounds (min–max); fixed = $FIXED_QPS q/s; ratio = the server's figure / Knot's, per round; a row with an aborted round shows why"
printf '%-9s %-6s %-10s %30s %20s\n' names server figure "median (min–max)" "/ Knot's"
for n in $SIZES; do
	for s in $SERVERS; do
		for w in uni-sat uni-fix zipf-sat zipf-fix rss rss-after rss-after-busy load loadcpu axfr axfr-data ixfr ixfr-data; do
			label=$w fmt=%.2f
			case $w in
			uni-* | zipf-*) label="$w us/q" ;;
			rss) label="B/record" fmt=%.0f ;;
			rss-after) label="B/rec after" fmt=%.0f ;;
			rss-after-busy) label="B/rec vs busy" fmt=%.0f ;;
			load) label="load s" ;;
			loadcpu) label="load CPU s" ;;
			axfr) label="AXFR s" ;;
			axfr-data) label="AXFR msgs s" ;;
			ixfr) label="IXFR s" ;;
			ixfr-data) label="IXFR msgs s" ;;
			esac
			reason=$(why "$s" "$n" "$w")
			if [ -n "$reason" ]; then
				printf '%-9s %-6s %-12s ABORTED: %s\n' "$n" "$s" "$label" "$reason"
				continue
			fi
			r="-"
			[ "$s" = knot ] || r=$(ratio "$s" "$n" "$w")
			printf '%-9s %-6s %-12s %28s %20s\n' "$n" "$s" "$label" "$(cell "$s" "$n" "$w" "$fmt")" "${r:--}"
		done
	done
done
for n in $SIZES; do
	for s in $SERVERS; do
		# Flatness: CPU per query at this size against the first size's
		# (Knot's too: how much of a change is the machine's).
		first=${SIZES%% *}
		[ "$n" = "$first" ] && continue
		for w in uni-sat uni-fix zipf-sat zipf-fix; do
			# A row aborted at either size has no figure to compare.
			[ -z "$(why "$s" "$first" "$w")$(why "$s" "$n" "$w")" ] || continue
			f=$(awk -v s="$s" -v a="$first" -v b="$n" -v w="$w" '$2 == s && $4 == w && ($3 == a || $3 == b) && $1 ~ /^[0-9]+$/ { v[$3] = v[$3] " " $5 }
				END { print v[a] "|" v[b] }' "$dir/results")
			# A row aborted in every round has no figures: no line (and grep's
			# status must not end the script under set -e).
			base=$(tr ' ' '\n' <<<"${f%%|*}" | { grep . || true; } | mmm | awk '{print $1}')
			this=$(tr ' ' '\n' <<<"${f##*|}" | { grep . || true; } | mmm | awk '{print $1}')
			[ -n "$base" ] && [ -n "$this" ] && printf '%-6s %-8s CPU per query %s: %.2f x the %s-name median\n' "$s" "$n" "$w" "$(awk -v a="$this" -v b="$base" 'BEGIN {print a / b}')" "$first"
		done
	done
done
