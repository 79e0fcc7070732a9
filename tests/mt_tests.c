/*
 * mt_tests: the one Check runner of `make check`: every suite, forked per
 * test, with Check's totals printed at the end.  Exit status 0 only when
 * every test passed.
 */
#include <stdlib.h>

#include "mt_test.h"

int main(void)
{
	SRunner *sr;
	int failed;

	mt_test_runner_init();
	sr = srunner_create(mt_suite_seed());
	srunner_add_suite(sr, mt_suite_fixtures());
	srunner_add_suite(sr, mt_suite_cli());
	srunner_add_suite(sr, mt_suite_summary());
	srunner_add_suite(sr, mt_suite_parse());
	srunner_add_suite(sr, mt_suite_oom());
	srunner_add_suite(sr, mt_suite_core());
	srunner_add_suite(sr, mt_suite_preload());
	srunner_add_suite(sr, mt_suite_run());
	srunner_add_suite(sr, mt_suite_fds());
	srunner_add_suite(sr, mt_suite_cancel());
	srunner_add_suite(sr, mt_suite_deploy());
	srunner_add_suite(sr, mt_suite_limits());
	srunner_add_suite(sr, mt_suite_record());
	srunner_add_suite(sr, mt_suite_man());
	{
		Suite *(*const more[])(void) = {
			mt_suite_hostile, mt_suite_stress, mt_suite_real,
			mt_suite_report, mt_suite_gate, mt_suite_suppress,
			mt_suite_sweep,
			mt_suite_clock, mt_suite_process, mt_suite_tree,
			mt_suite_fmt, mt_suite_utf8, mt_suite_event, mt_suite_buf,
			mt_suite_map, mt_suite_blocks, mt_suite_mem, mt_suite_reader,
			mt_suite_analysis, mt_suite_heap,
			mt_suite_compressed, mt_suite_flat, mt_suite_block_line,
			mt_suite_any_json, mt_suite_validate, mt_suite_run_lines,
			mt_suite_out, mt_suite_collector, mt_suite_export,
			mt_suite_html,
			mt_suite_sample,
			mt_suite_top,
			mt_suite_api,
			mt_suite_units,
		};

		for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
			if (more[i])
				srunner_add_suite(sr, more[i]());
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
