# bench/lib.sh: what both bench scripts need, sourced by them (never run
# alone, never part of make check).  The caller sets bench_name (its name
# for messages) first.

# bench_fail MESSAGE: one line on stderr, then exit 1.  A script that
# draws progress on stderr defines bench_fail_hook to end its line first.
bench_fail() {
	command -v bench_fail_hook >/dev/null 2>&1 && bench_fail_hook
	echo "$bench_name: $*" >&2
	exit 1
}

# bench_need_tools: GNU time (the peak RSS of a child, the Debian package
# "time"), installed with apt-get when root and missing; GNU date (a
# nanosecond wall clock).
bench_need_tools() {
	if [ ! -x /usr/bin/time ]; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
			echo "$bench_name: installing GNU time (apt-get install time)" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q time >/dev/null 2>&1 ||
				{ apt-get update -q >/dev/null 2>&1 &&
				  DEBIAN_FRONTEND=noninteractive apt-get install -y -q time >/dev/null; } || true
		fi
		[ -x /usr/bin/time ] || bench_fail "needs /usr/bin/time (apt-get install time)"
	fi
	case $(date +%N) in
	*N* | '') bench_fail "needs GNU date (date +%N)" ;;
	esac
}

# bench_need_command CMD PACKAGE: CMD on PATH, installed from the Debian
# PACKAGE with apt-get when root and missing.
bench_need_command() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "$bench_name: installing $2 (apt-get install $2)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 &&
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null; } || true
	fi
	command -v "$1" >/dev/null 2>&1 || bench_fail "needs $1 (apt-get install $2)"
}

# median FILE COLUMN: of the space-separated column; the mean of the two
# middle values for an even count, printed in full (awk's default %.6g
# would print a nanosecond sum as 1.282e+09).
median() {
	cut -d ' ' -f "$2" "$1" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_even_rounds N: N, or N + 1 when N is odd (said on stderr).  The
# scripts that compare builds reverse their order every other round, and
# the second run of a round pays for the first's leftovers (a collector
# still exiting, pages still being freed: an A/A pair of one preload gave
# 1.03 to 1.07 for the second-run side in its rounds, 0.97 to 1.00 for
# the other): each build must run first as often as last.
bench_even_rounds() {
	if [ $(($1 % 2)) = 1 ]; then
		echo "$bench_name: $(($1 + 1)) rounds, not $1, so that each build runs first as often as last" >&2
		echo $(($1 + 1))
	else
		echo "$1"
	fi
}

# bench_pair_ratios: per-round ratios on stdin, a line a round in round
# order, any number of columns; on stdout the geometric mean of each pair
# of rounds (one in each order, so what a run's place in its round costs
# cancels out), column by column, a line a pair.
bench_pair_ratios() {
	awk '{
		for (c = 1; c <= NF; c++)
			if (NR % 2)
				p[c] = $c
			else
				printf "%s%.4f", (c > 1 ? " " : ""), sqrt(p[c] * $c)
		if (!(NR % 2))
			printf "\n"
	}'
}

# max FILE COLUMN
max() {
	cut -d ' ' -f "$2" "$1" | sort -n | tail -n 1
}

# bench_cores BUILD: one line, what passing a cache line between two cores
# costs now (mt-pingpong's round trip), which moves every figure with two
# busy threads on this project's guests (docs/performance.md, "The
# machine").
bench_cores() {
	if [ -x "$1/mt-pingpong" ]; then
		echo "$("$1/mt-pingpong") ns"
	else
		echo "unknown (no $1/mt-pingpong)"
	fi
}

# bench_workload NAME: the preload benches' workloads (the caller sets
# build, here, python and tmp): sets wl_env (environment entries) and
# wl_cmd (the command line).
bench_workload() {
	wl_env=""
	case $1 in
	churn) wl_cmd="$build/mt-churn" ;;
	deep) wl_cmd="$build/mt-deep" ;;
	threads) wl_cmd="$build/mt-churn -t 8 -n 625000" ;;
	spawn) wl_cmd="$build/mt-churn -s -t 6000 -n 30" ;;
	python)
		wl_env="PYTHONMALLOC=malloc"
		wl_cmd="$python $here/mt_python.py"
		;;
	sqlite)
		[ -e "$tmp/mt_sqlite.sql" ] || sh "$here/mt_sqlite.sh" "$tmp"
		wl_cmd="sqlite3 -batch -init $tmp/mt_sqlite.sql :memory: .quit"
		;;
	esac
}

# bench_checksum FILE: the line a workload prints that must not change
# under a tracer.
bench_checksum() {
	grep -E '^(churn|deep|python|sqlite): ' "$1" || true
}
