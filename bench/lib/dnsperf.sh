# Shared by the DNS bench scripts (bench/dns-vs-peers/run.sh, dynamic.sh,
# signed.sh, and scale.sh and xfrside.sh with xfr.sh): starting a server
# and waiting until it answers, one dnsperf run turned into a recorded line
# or an ABORT, and the table of medians. Source it after stats.sh, with
# $repo, $dir (the run's temporary directory), $pids (an array the cleanup
# kills), $SERVER_CPU, $CLIENT_CPU, $DURATION, $FIXED_QPS and $clk
# (getconf CLK_TCK) set; it defines functions only.

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# ctx_switches PID: the context switches of PID's threads so far, voluntary
# and not. A server that sleeps and wakes per batch pays for both (on a VM a
# wake-up across cores is an interrupt, and the dearest thing it does but
# moving the packets); per query the count shows how well it batches, and
# unlike CPU time it does not move with the VM's speed.
ctx_switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'; }

# build_dnsready: bench/dns-vs-peers/dnsready, built into $dir. The
# scripts ask with it whether a server answers: every 5 ms, and a refused
# query (the port not bound yet) comes back at once, where dnsperf, the
# probe before it, waited out its shortest timeout, a second, per probe.
build_dnsready() {
	(cd "$repo" && go build -o "$dir/dnsready" ./bench/dns-vs-peers/dnsready)
}

# port_answers PORT: whether a server answers on 127.0.0.1:PORT already
# (any reply within 0.2 s), to refuse to start a server on a taken port.
port_answers() {
	"$dir/dnsready" -addr "127.0.0.1:$1" -name ns1.example.test -any -timeout 200ms >/dev/null 2>&1
}

# knot_server DIR PORT [LINE...]: the server section of a Knot
# configuration: 127.0.0.1:PORT, its run directory DIR, one worker of each
# kind, then the LINEs (each "key: value").
knot_server() {
	printf 'server:\n    listen: 127.0.0.1@%s\n    rundir: %s\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n' "$2" "$1"
	local l
	for l in "${@:3}"; do printf '    %s\n' "$l"; done
}

# write_knot_conf FILE PORT ZONEFILE [transfer]: a Knot configuration
# serving example.test from ZONEFILE on 127.0.0.1:PORT with one worker of
# each kind. With "transfer" it is a primary for the transfer runs
# (scale.sh, xfrside.sh): transfers allowed to 127.0.0.0/8, changes kept
# in the journal (an IXFR's source), the zone file never rewritten, a
# control socket (knotc -s DIR/knot.sock) and 30 s for a secondary to
# take each message (tcp-io-timeout, 0.5 s by default: a secondary that
# paused for half a second on a busy machine had its AXFR reset).
write_knot_conf() {
	local d server=() zone="" control=""
	d=$(dirname "$1")
	if [ "${4:-}" = transfer ]; then
		server=("tcp-io-timeout: 30000")
		control="
control:
    listen: $d/knot.sock
acl:
  - id: xfr
    address: 127.0.0.0/8
    action: transfer"
		zone="
    acl: xfr
    zonefile-sync: -1
    journal-content: changes"
	fi
	knot_server "$d" "$2" "${server[@]}" >"$1"
	cat >>"$1" <<CONF
database:
    storage: $d/db
log:
  - target: stderr
    any: error$control
zone:
  - domain: example.test
    file: $3$zone
CONF
}

# await_server NAME PORT PROBE_NAME: after starting server NAME in the
# background ($! its PID), records the PID in $pids and $started_pid and
# waits (10 s at most, and while it lives) until it answers PROBE_NAME
# with an address (dnsready from $CLIENT_CPU, every 5 ms), then pins every
# thread of it to $SERVER_CPU (see off_core); exits with its log
# ($dir/NAME.log) if it does not answer.
await_server() {
	started_pid=$!
	pids+=("$started_pid")
	if taskset -c "$CLIENT_CPU" "$dir/dnsready" -addr "127.0.0.1:$2" -name "$3" -timeout 10s -pid "$started_pid" >/dev/null 2>&1; then
		taskset -a -p -c "$SERVER_CPU" "$started_pid" >/dev/null
		return
	fi
	echo "server $1 did not start; log:" >&2
	cat "$dir/$1.log" >&2 || true
	exit 1
}

# in_order ROUND WORD...: the words in order for odd rounds, reversed for
# even ones. The scripts run the servers so, so that no server always
# follows the same neighbour: a server run right after one that kept a core
# at 100 % for a whole run (PowerDNS) may find the machine in another state.
in_order() {
	local r=$1
	shift
	local a=("$@") i
	for i in "${!a[@]}"; do
		if ((r % 2)); then printf '%s ' "${a[i]}"; else printf '%s ' "${a[${#a[@]} - 1 - i]}"; fi
	done
}

# off_core PID: the threads of PID allowed on a CPU other than $SERVER_CPU
# ("name:cpus" each), or nothing. A server started under taskset may set
# its threads' affinity itself: Knot pins its UDP worker n to CPU
# n mod (online CPUs), so on two cores its one UDP worker moved to CPU 0,
# the load generator's, and its figures were those of a server sharing
# the client's core (no cross-core wake-ups). await_server pins every
# thread back; run_one checks before and after each run.
off_core() {
	local t allowed
	for t in /proc/"$1"/task/*; do
		allowed=$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status" 2>/dev/null) || continue
		[ -z "$allowed" ] || [ "$allowed" = "$SERVER_CPU" ] || printf '%s:%s ' "$(cat "$t/comm" 2>/dev/null)" "$allowed"
	done
}

# record_run ROUND SERVER LOAD FIXED OUT BEFORE AFTER: checks dnsperf's
# output OUT, the server's CPU ticks before and after (AFTER empty: the
# server is gone) and that $stray (off_core before and after the run) is
# empty, then prints the run and appends it to $dir/results, or an ABORT
# line with the reason. FIXED is 1 when the run had a fixed rate
# ($FIXED_QPS), which it must have achieved within 95–105 %.
record_run() {
	local round=$1 s=$2 load=$3 fixed=$4 out=$5 before=$6 after=$7
	local done lost qps lat bad why=""
	done=$(awk '/Queries completed:/ {print $3}' <<<"$out")
	lost=$(awk '/Queries lost:/ {print $3}' <<<"$out")
	qps=$(awk '/Queries per second:/ {print $4}' <<<"$out")
	lat=$(awk '/Average Latency/ {print $4; exit}' <<<"$out") # the first: TCP adds the connections' own
	if [ -z "$after" ]; then
		why="the server exited during the run"
	elif [ -n "${stray:-}" ]; then
		why="server threads allowed off core $SERVER_CPU during the run ($stray): the figures would not be one core's"
	elif ! is_num "$done" || ! is_num "$qps" || ! is_num "$lat" || ! is_num "$lost"; then
		why="dnsperf printed no count, rate or latency: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	elif [ "$done" -eq 0 ]; then
		why="no query completed"
	elif bad=$(grep -oE '(FORMERR|SERVFAIL|REFUSED|NOTIMP|BADVERS)[^,]*' <<<"$out" | tr '\n' ' ') && [ -n "$bad" ]; then
		why="the server answered $bad: the queries or the server are broken, the figures would not be answers"
	elif [ "$fixed" = 1 ] && ! in_range "$qps" "$(awk -v q="$FIXED_QPS" 'BEGIN {print 0.95 * q}')" "$(awk -v q="$FIXED_QPS" 'BEGIN {print 1.05 * q}')"; then
		why="achieved $qps q/s, outside 95–105 % of $FIXED_QPS"
	fi
	if [ -n "$why" ]; then
		echo "ABORT $round $s $load $why" >>"$dir/results"
		printf '%-7s %-8s row aborted (round %d): %s\n' "$s" "$load" "$round" "$why"
		return
	fi
	# Context switches per 1,000 queries, from sw0 and sw1 (ctx_switches
	# before and after the run), "-" when either is missing.
	local sw="-"
	is_num "${sw0:-}" && is_num "${sw1:-}" && [ "$sw1" -ge "$sw0" ] && sw=$(awk -v a="$sw0" -v b="$sw1" -v d="$done" 'BEGIN { printf "%.1f", (b - a) * 1000 / d }')
	awk -v r="$round" -v s="$s" -v l="$load" -v q="$qps" -v lat="$lat" -v lost="$lost" -v d="$done" -v t=$((after - before)) -v clk="$clk" -v dur="$DURATION" -v sw="$sw" -v res="$dir/results" 'BEGIN {
		cpu = t / clk
		per = cpu * 1e6 / d
		printf "%-7s %-8s %9.0f qps  %7.1f us avg  %7s lost  %5.1f%% busy  %6.2f us CPU/query  %6s switches/1k q\n", s, l, q, lat * 1e6, lost, 100 * cpu / dur, per, sw
		printf "%d %s %s %.0f %.1f %.3f %s %s\n", r, s, l, q, lat * 1e6, per, lost, sw >> res
	}'
}

# table_row SERVER LOAD BASE [BASE2]: one row of the summary: the median
# (min–max) of q/s, latency and CPU per query over the rounds in
# $dir/results, and the CPU per query relative to server BASE's (per
# round, then summarised; "-" for BASE itself or when BASE did not run or
# aborted), then relative to BASE2's likewise when given (a last column),
# or ABORTED with the first reason.
table_row() {
	local s=$1 load=$2 base=$3 base2=${4:-} why ratio="-" ratio2="-"
	why=$(awk -v s="$s" -v l="$load" '$1 == "ABORT" && $3 == s && $4 == l { $1 = $3 = $4 = ""; sub(/^ +/, ""); gsub(/ +/, " "); print "round " $0; exit }' "$dir/results")
	if [ -n "$why" ]; then
		printf '%-13s %-10s ABORTED: %s\n' "$s" "$load" "$why"
		return
	fi
	col() { awk -v s="$s" -v l="$load" -v c="$1" '$2 == s && $3 == l { print $c }' "$dir/results" | mmm | fmt_mmm "$2"; }
	ratio_to() { # base: the per-round CPU ratio of s to base, summarised, or "-"
		if [ "$s" != "$1" ] && [[ " $SERVERS " == *" $1 "* ]] && ! grep -q "^ABORT [0-9]* $1 $load " "$dir/results"; then
			awk -v s="$s" -v l="$load" -v b="$1" '$3 == l && ($2 == s || $2 == b) { v[$1, $2] = $6; r[$1] = 1 }
				END { for (k in r) if (v[k, b] > 0 && v[k, s] != "") print v[k, s] / v[k, b] }' "$dir/results" | mmm | fmt_mmm %.2f
		fi
	}
	ratio=$(ratio_to "$base")
	local sw
	sw=$(awk -v s="$s" -v l="$load" '$2 == s && $3 == l && $8 != "-" { print $8 }' "$dir/results" | mmm | fmt_mmm %.1f)
	printf '%-13s %-10s %26s %24s %28s %22s %24s' "$s" "$load" "$(col 4 %.0f)" "$(col 5 %.1f)" "$(col 6 %.2f)" "${ratio:--}" "${sw:--}"
	if [ -n "$base2" ]; then
		ratio2=$(ratio_to "$base2")
		printf ' %22s' "${ratio2:--}"
	fi
	echo
}
