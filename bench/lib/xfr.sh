# Shared by the transfer runs (bench/dns-vs-peers/scale.sh, xfrside.sh):
# their tools built, a primary started (Knot, BIND 9 or the embedded server) and
# timed until it answers, a fresh Knot secondary started, and the figures
# read from the secondary's log. Source it after stats.sh and dnsperf.sh,
# with $repo, $dir (the run's temporary directory), $pids (an array the
# cleanup kills), $SERVER_CPU, $CLIENT_CPU and $LOAD_TIMEOUT set; it
# defines functions only.

# build_xfr_tools: the embedded server, zonegen and dnsready, built into
# $dir.
build_xfr_tools() {
	(cd "$repo" && for t in embedded zonegen dnsready; do go build -o "$dir/$t" "./bench/dns-vs-peers/$t" || exit 1; done)
}

now() { date +%s.%N; }

# bind_update_key FILE: a fresh TSIG key named "update" (HMAC-SHA256), as
# a named.conf key statement, in FILE: the key write_bind_conf's zone takes
# dynamic updates signed with, and nsupdate -k FILE signs them with.
bind_update_key() { tsig-keygen -a hmac-sha256 update >"$1"; }

# write_bind_conf DIR PORT ZONEFILE [KEYFILE]: DIR/named.conf, BIND 9
# serving example.test from ZONEFILE on 127.0.0.1:PORT as a primary for
# the transfer runs, with the options of bench/dns-vs-peers/run.sh (no
# recursion, no validation, minimal responses) and: transfers allowed to
# 127.0.0.0/8, as Knot's (allow-transfer); no NOTIFY (notify no: the zone's
# NS is ns1.example.test, 127.0.0.1 port 53, whoever listens there; the
# secondary is refreshed with knotc, as from Knot); no control channel
# (controls { }: the default one listens on 127.0.0.1 port 953, shared by
# every named on the machine); its journal in DIR (journal), and with
# KEYFILE (bind_update_key) dynamic updates signed with that key
# (allow-update): the journal an IXFR is answered from. A zone updated is
# written back to ZONEFILE when named stops (and within 15 minutes of an
# update): give it a copy. BIND's defaults hold for the rest: a secondary
# has 30 s to send its request on a new connection (tcp-initial-timeout)
# and 60 minutes to take each message of a transfer (max-transfer-idle-out),
# more than Knot's raised 30 s; an IXFR larger than the zone is sent as an
# AXFR (max-ixfr-ratio 100%).
write_bind_conf() {
	local d=$1 key="" update=""
	if [ -n "${4:-}" ]; then
		key="include \"$4\";"
		update='allow-update { key "update"; };'
	fi
	cat >"$d/named.conf" <<CONF
options {
  directory "$d"; pid-file "$d/named.pid";
  listen-on port $2 { 127.0.0.1; }; listen-on-v6 { none; };
  recursion no; dnssec-validation no; minimal-responses yes;
  notify no;
};
controls { };
$key
zone "example.test" {
  type primary; file "$3"; journal "$d/example.test.jnl";
  allow-transfer { 127.0.0.0/8; };
  $update
};
CONF
}

# start_server NAME SERVER PORT ZONEFILE [ARG...]: starts a primary serving
# example.test from ZONEFILE on 127.0.0.1:PORT, pinned on $SERVER_CPU,
# logging to $dir/NAME.log: SERVER "knot" is Knot (write_knot_conf's
# transfer primary, in $dir/NAME, its control socket $dir/NAME/knot.sock),
# "bind" BIND 9 with one worker thread (named -n 1; write_bind_conf's
# transfer primary, in $dir/NAME, taking updates signed with the key in
# the file ARG when given: see there, and give it a copy of the zone
# file), any other the embedded server's binary at that path, in fast
# mode with -xfr and the ARGs. Sets started_pid and adds it to $pids;
# returns at once (await_answer waits).
start_server() {
	local name=$1 s=$2 port=$3 zf=$4
	shift 4
	case $s in
	knot)
		rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name/db"
		write_knot_conf "$dir/$name/knot.conf" "$port" "$zf" transfer
		taskset -c "$SERVER_CPU" knotd -c "$dir/$name/knot.conf" >"$dir/$name.log" 2>&1 &
		;;
	bind)
		rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name"
		write_bind_conf "$dir/$name" "$port" "$zf" "${1:-}"
		taskset -c "$SERVER_CPU" named -g -u root -n 1 -c "$dir/$name/named.conf" >"$dir/$name.log" 2>&1 &
		;;
	*)
		taskset -c "$SERVER_CPU" "$s" -zonefile "$zf" -addr "127.0.0.1:$port" -mode fast -xfr "$@" >"$dir/$name.log" 2>&1 &
		;;
	esac
	started_pid=$!
	pids+=("$started_pid")
}

# await_answer PORT PID: waits (LOAD_TIMEOUT at most, and while process PID
# lives) until the server on PORT answers ns1.example.test with its
# address, probing every 5 ms from $CLIENT_CPU (dnsready: a refused probe
# comes back at once, so the time is the server's to within 5 ms, where a
# dnsperf probe sent before the server bound its port waited out a
# second); sets answered_at (Unix seconds, as now prints them), or
# returns 1.
await_answer() {
	answered_at=$(taskset -c "$CLIENT_CPU" "$dir/dnsready" -addr "127.0.0.1:$1" -name ns1.example.test -timeout "${LOAD_TIMEOUT}s" -pid "$2" 2>/dev/null)
}

# cpu_wait PID: the seconds PID's threads have spent runnable but waiting
# for a CPU (the second field of /proc/PID/task/*/schedstat): what a wall
# time holds beyond the CPU time on a busy machine.
cpu_wait() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ w += $2 } END { printf "%.3f", w / 1e9 }'; }

# start_secondary DIR SECPORT PRIMARYPORT: a fresh Knot secondary of
# example.test in DIR (emptied first) on 127.0.0.1:SECPORT, pinned on
# $CLIENT_CPU, from the primary on PRIMARYPORT, logging transfers to
# DIR/log; it waits up to LOAD_TIMEOUT for each message of a transfer
# (tcp-remote-io-timeout, 5 s by default: a primary that lists a large
# zone before its first message, or a secondary paused on a busy machine,
# outlasts it). Sets sec_pid and adds it to $pids.
start_secondary() {
	local d=$1
	rm -rf "$d" && mkdir -p "$d/db"
	knot_server "$d" "$2" "tcp-remote-io-timeout: $((LOAD_TIMEOUT * 1000))" >"$d/knot.conf"
	cat >>"$d/knot.conf" <<CONF
database:
    storage: $d/db
control:
    listen: $d/knot.sock
log:
  - target: stderr
    any: info
remote:
  - id: primary
    address: 127.0.0.1@$3
zone:
  - domain: example.test
    master: primary
    file: $d/example.test.zone
    zonefile-sync: -1
    zonefile-load: none
    journal-content: changes
CONF
	taskset -c "$CLIENT_CPU" knotd -c "$d/knot.conf" >"$d/log" 2>&1 &
	sec_pid=$!
	pids+=("$sec_pid")
}

# xfr_seconds KIND LOG: the seconds the secondary's LOG reports for its
# last finished incoming KIND (AXFR or IXFR), counted from the first
# message, then the messages ("2.17 2154"), or nothing.
xfr_seconds() {
	grep -E "$1, incoming, .* finished, [0-9.]+ seconds, [0-9]+ messages" "$2" | tail -n 1 | sed -E 's/.*finished, ([0-9.]+) seconds, ([0-9]+) messages.*/\1 \2/'
}

# refresh_seconds FROM TO LOG: the seconds the secondary's LOG reports for
# the refresh that took the zone from serial FROM ("none": empty) to TO
# (either may be a pattern), or nothing.
refresh_seconds() {
	grep -E "refresh, remote .*, zone updated, [0-9.]+ seconds, serial $1 -> $2," "$3" | tail -n 1 | sed -E 's/.*zone updated, ([0-9.]+) seconds.*/\1/'
}

# refresh_failed LOG: the secondary's last failed refresh, or nothing.
refresh_failed() { grep -E "refresh, .*failed" "$1" | tail -n 1; }
