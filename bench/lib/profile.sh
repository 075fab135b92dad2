# Shared by the DNS bench scripts (bench/dns-vs-peers/run.sh, dynamic.sh,
# signed.sh): with PROFILE=1, what one query costs a server beyond its CPU
# time. Around each dnsperf run, profile_start and profile_stop read the
# server's user and system CPU (/proc/PID/stat), each thread's voluntary
# and involuntary context switches (/proc/PID/task/*/status) and, with
# `perf stat` on the syscall tracepoints (-p PID), its system calls by
# kind; profile_table prints their medians per query. Tracing every system call costs the
# server a little CPU, the same for every server: compare the CPU columns
# of a profiled run with each other, not with an unprofiled run. Source it
# after stats.sh, with $dir and $clk set; it defines functions only.

# The counted calls: receive, send and wait calls of the servers measured
# (the embedded zone's recvmmsg/sendmmsg, Knot's epoll_wait around
# recvmmsg/sendmmsg, gdnsd's recvmmsg/sendmmsg, PowerDNS's recvmsg/sendmsg),
# and the Go runtime's futex and nanosleep; raw_syscalls:sys_enter counts
# every call.
profile_events=raw_syscalls:sys_enter
for e in recvmmsg recvmsg recvfrom sendmmsg sendmsg sendto epoll_wait epoll_pwait poll ppoll futex nanosleep clock_nanosleep; do
	profile_events+=,syscalls:sys_enter_$e
done

# profile_check: exits with a message unless perf can count the syscall
# tracepoints here (perf installed, tracefs readable, perf_event_paranoid
# low enough for the user).
profile_check() {
	command -v perf >/dev/null || { echo "PROFILE=1 needs perf (apt-get install linux-perf)" >&2; exit 1; }
	if ! perf stat -x, -e syscalls:sys_enter_getpid true >/dev/null 2>&1; then
		echo "PROFILE=1: perf cannot count syscall tracepoints here (run as root, or lower /proc/sys/kernel/perf_event_paranoid)" >&2
		exit 1
	fi
}

# profile_threads PID: "tid voluntary involuntary" per thread.
profile_threads() {
	local t
	for t in /proc/"$1"/task/*; do
		awk -v t="${t##*/}" '/^voluntary_ctxt_switches:/ { v = $2 } /^nonvoluntary_ctxt_switches:/ { n = $2 } END { print t, v + 0, n + 0 }' "$t/status" 2>/dev/null
	done | sort
}

# profile_start PID: records PID's CPU and switches and starts perf on it.
profile_start() {
	prof_stat0=$(awk '{ print $14, $15 }' "/proc/$1/stat")
	profile_threads "$1" >"$dir/prof.threads0"
	perf stat -x, -e "$profile_events" -p "$1" -o "$dir/prof.perf" &
	prof_perf=$!
}

# profile_stop ROUND SERVER LOAD PID OUT: stops perf and appends one line
# to $dir/profile: round server load queries, user and system CPU µs per
# query, system calls per query (all, receive, send, wait, futex,
# nanosleep), voluntary and involuntary switches per query, and the number
# of threads that switched during the run. Nothing when dnsperf completed
# nothing or the server is gone.
profile_stop() {
	local round=$1 s=$2 load=$3 pid=$4 out=$5 done stat1
	kill -INT "$prof_perf" 2>/dev/null || true
	wait "$prof_perf" 2>/dev/null || true
	done=$(awk '/Queries completed:/ { print $3 }' <<<"$out")
	stat1=$(awk '{ print $14, $15 }' "/proc/$pid/stat" 2>/dev/null) || return 0
	is_num "${done:-}" && [ "$done" -gt 0 ] || return 0
	profile_threads "$pid" >"$dir/prof.threads1"
	local sw
	sw=$(join "$dir/prof.threads0" "$dir/prof.threads1" | awk '{ v = $4 - $2; n = $5 - $3; tv += v; tn += n; if (v + n > 0) k++ } END { print tv + 0, tn + 0, k + 0 }')
	awk -F, -v r="$round" -v s="$s" -v l="$load" -v d="$done" -v st0="$prof_stat0" -v st1="$stat1" -v sw="$sw" -v clk="$clk" '
		$1 ~ /^[0-9]+$/ {
			e = $3; sub(/^.*sys_enter_?/, "", e); c[e] += $1
		}
		END {
			split(st0, a, " "); split(st1, b, " "); split(sw, w, " ")
			recv = c["recvmmsg"] + c["recvmsg"] + c["recvfrom"]
			send = c["sendmmsg"] + c["sendmsg"] + c["sendto"]
			wait = c["epoll_wait"] + c["epoll_pwait"] + c["poll"] + c["ppoll"]
			sleep = c["nanosleep"] + c["clock_nanosleep"]
			printf "%d %s %s %d %.3f %.3f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %d\n", r, s, l, d,
				(b[1] - a[1]) / clk * 1e6 / d, (b[2] - a[2]) / clk * 1e6 / d,
				c[""] / d, recv / d, send / d, wait / d, c["futex"] / d, sleep / d,
				w[1] / d, w[2] / d, w[3]
		}' "$dir/prof.perf" >>"$dir/profile"
}

# profile_table SERVERS LOADS: the medians (min–max) over the rounds of each
# column of $dir/profile, per server and load, leaving out the rounds that
# $dir/results marks aborted (a fixed rate not reached, ...); the last
# column says how many rounds are left.
profile_table() {
	local servers=$1 loads=$2 s l
	[ -s "$dir/profile" ] || return 0
	awk 'NR == FNR { if ($1 == "ABORT") bad[$2, $3, $4] = 1; next } !(($1, $2, $3) in bad)' "$dir/results" "$dir/profile" >"$dir/profile.ok"
	echo
	echo "profile (PROFILE=1), per query: median of the rounds not aborted (min–max); CPU in µs from /proc/PID/stat; calls from perf stat on the syscall tracepoints; switches from /proc/PID/task/*/status"
	printf '%-16s %-10s %18s %18s %20s %20s %20s %20s %20s %20s %20s %20s %9s %7s\n' server load "user us" "sys us" "syscalls" "recv calls" "send calls" "epoll/poll" "futex" "nanosleep" "vol switches" "invol switches" threads rounds
	for l in $loads; do
		for s in $servers; do
			grep -q "^[0-9]* $s $l " "$dir/profile.ok" || continue
			printf '%-16s %-10s' "$s" "$l"
			local c f
			for c in 5 6 7 8 9 10 11 12 13 14 15; do
				case $c in 5 | 6) f=%.2f ;; 15) f=%.0f ;; *) f=%.3f ;; esac
				if [ "$c" = 15 ]; then
					printf ' %9s' "$(awk -v s="$s" -v l="$l" -v c="$c" '$2 == s && $3 == l { print $c }' "$dir/profile.ok" | mmm | awk '{ print $1 }')"
				else
					printf " %$([ "$c" -le 6 ] && echo 18 || echo 20)s" "$(awk -v s="$s" -v l="$l" -v c="$c" '$2 == s && $3 == l { print $c }' "$dir/profile.ok" | mmm | fmt_mmm "$f")"
				fi
			done
			printf ' %7s\n' "$(awk -v s="$s" -v l="$l" '$2 == s && $3 == l' "$dir/profile.ok" | wc -l)"
		done
	done
}
