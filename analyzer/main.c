/*
 * main: the memtrace executable; everything it does lives in mt_cli.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/mt_cli.h"
#include "base/mt_mem.h"
#include "base/mt_units.h"

/* MEMTRACE_ANALYZER_FAIL_AT=N, the CLI tests' way in: the Nth allocation
 * fails.  Anything but a whole number of 1 or more changes nothing. */
static void fail_at_from_env(void)
{
	const char *s = getenv("MEMTRACE_ANALYZER_FAIL_AT");
	uint64_t n;

	if (s && !mt_units_parse_count(s, &n) && n)
		mt_mem_fail_at(n, 0);
}

int main(int argc, char **argv)
{
	int status;

	/* Blocks of 128 KiB and more are mappings of their own, given back
	 * whole when freed.  glibc otherwise raises that bound to the size
	 * of each such block freed (the reader's 3 MiB buffer, handed over
	 * to the read-ahead threads), and later tables of up to that size
	 * come from the heap, whose holes stay resident: python3's trace
	 * peaked 4.6 MiB higher with --threads 2 (docs/performance.md). */
	(void)mallopt(M_MMAP_THRESHOLD, 128 << 10);
	fail_at_from_env();
	status = mt_cli_main(argc, argv);
	if (fflush(stdout) != 0 && status == 0)
		status = 73;
	return status;
}
