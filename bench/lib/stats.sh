# Shared by the bench scripts: summaries that cannot print a broken figure.
# Source it; it defines functions only.

# mmm: reads numbers, one per line, and prints "median min max" (the median
# of an even count is the mean of the middle two). Prints nothing for no input.
mmm() {
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) exit
		med = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%g %g %g\n", med, a[1], a[NR]
	}'
}

# fmt_mmm: "median min max" → "median (min–max)" with printf format $1.
fmt_mmm() {
	local f=$1 med lo hi
	read -r med lo hi || return 0
	# shellcheck disable=SC2059
	printf "$f ($f–$f)" "$med" "$lo" "$hi"
}

# is_num: whether $1 is a plain non-negative decimal number.
is_num() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }

# in_range: whether $1 is within [$2, $3] (decimals allowed).
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
