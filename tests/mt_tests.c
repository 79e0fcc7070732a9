/*
 * mt_tests: the one Check runner of `make check`: every suite of
 * tests/mt_test.h, each called by name so that a missing one fails the
 * link, forked per test, side by side as mt_test_jobs says (MT_TEST_JOBS=1:
 * one after another, in one Check runner), with the totals printed at the
 * end.  Exit status 0 only when every test passed.
 */
#include <stdlib.h>

#include "mt_test.h"
#include "mt_test_jobs.h"

#define SUITE(name, long_running) { mt_suite_##name, long_running }

/* In the order of a serial run and of the output.  The long ones (a
 * minute or more: real programs, sweeps, sanitizer-heavy work) are
 * started first when suites run side by side. */
static const mt_test_suite_t suites[] = {
	SUITE(seed, 0),
	SUITE(fixtures, 0),
	SUITE(cli, 0),
	SUITE(summary, 0),
	SUITE(parse, 0),
	SUITE(oom, 1),
	SUITE(core, 0),
	SUITE(exe, 0),
	SUITE(preload, 1),
	SUITE(run, 0),
	SUITE(fds, 0),
	SUITE(cancel, 0),
	SUITE(deploy, 0),
	SUITE(limits, 0),
	SUITE(record, 1),
	SUITE(man, 0),
	SUITE(hostile, 1),
	SUITE(stress, 1),
	SUITE(real, 1),
	SUITE(unwind, 1),
	SUITE(report, 1),
	SUITE(gate, 1),
	SUITE(suppress, 0),
	SUITE(sweep, 1),
	SUITE(clock, 0),
	SUITE(process, 0),
	SUITE(tree, 1),
	SUITE(identity, 1),
	SUITE(fmt, 0),
	SUITE(utf8, 0),
	SUITE(event, 0),
	SUITE(buf, 0),
	SUITE(map, 0),
	SUITE(blocks, 0),
	SUITE(mem, 0),
	SUITE(reader, 0),
	SUITE(analysis, 0),
	SUITE(heap, 0),
	SUITE(compressed, 1),
	SUITE(ahead, 1),
	SUITE(flat, 0),
	SUITE(block_line, 0),
	SUITE(any_json, 0),
	SUITE(validate, 0),
	SUITE(run_lines, 0),
	SUITE(out, 1),
	SUITE(zpool, 0),
	SUITE(collector, 1),
	SUITE(export, 1),
	SUITE(html, 1),
	SUITE(sample, 0),
	SUITE(top, 0),
	SUITE(api, 0),
	SUITE(units, 0),
	SUITE(docs, 0),
	SUITE(jobs, 0),
};

int main(void)
{
	mt_test_runner_init();
	return mt_test_jobs_run(suites, sizeof(suites) / sizeof(suites[0]),
				mt_test_jobs_wanted()) ?
		       EXIT_FAILURE :
		       EXIT_SUCCESS;
}
