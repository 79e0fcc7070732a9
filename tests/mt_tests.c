/*
 * mt_tests: the one Check runner of `make check`: every suite of
 * tests/mt_test.h, each called by name so that a missing one fails the
 * link, forked per test, with Check's totals printed at the end.  Exit
 * status 0 only when every test passed.
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
	srunner_add_suite(sr, mt_suite_hostile());
	srunner_add_suite(sr, mt_suite_stress());
	srunner_add_suite(sr, mt_suite_real());
	srunner_add_suite(sr, mt_suite_unwind());
	srunner_add_suite(sr, mt_suite_report());
	srunner_add_suite(sr, mt_suite_gate());
	srunner_add_suite(sr, mt_suite_suppress());
	srunner_add_suite(sr, mt_suite_sweep());
	srunner_add_suite(sr, mt_suite_clock());
	srunner_add_suite(sr, mt_suite_process());
	srunner_add_suite(sr, mt_suite_tree());
	srunner_add_suite(sr, mt_suite_identity());
	srunner_add_suite(sr, mt_suite_fmt());
	srunner_add_suite(sr, mt_suite_utf8());
	srunner_add_suite(sr, mt_suite_event());
	srunner_add_suite(sr, mt_suite_buf());
	srunner_add_suite(sr, mt_suite_map());
	srunner_add_suite(sr, mt_suite_blocks());
	srunner_add_suite(sr, mt_suite_mem());
	srunner_add_suite(sr, mt_suite_reader());
	srunner_add_suite(sr, mt_suite_analysis());
	srunner_add_suite(sr, mt_suite_heap());
	srunner_add_suite(sr, mt_suite_compressed());
	srunner_add_suite(sr, mt_suite_ahead());
	srunner_add_suite(sr, mt_suite_flat());
	srunner_add_suite(sr, mt_suite_block_line());
	srunner_add_suite(sr, mt_suite_any_json());
	srunner_add_suite(sr, mt_suite_validate());
	srunner_add_suite(sr, mt_suite_run_lines());
	srunner_add_suite(sr, mt_suite_out());
	srunner_add_suite(sr, mt_suite_collector());
	srunner_add_suite(sr, mt_suite_export());
	srunner_add_suite(sr, mt_suite_html());
	srunner_add_suite(sr, mt_suite_sample());
	srunner_add_suite(sr, mt_suite_top());
	srunner_add_suite(sr, mt_suite_api());
	srunner_add_suite(sr, mt_suite_units());
	srunner_add_suite(sr, mt_suite_docs());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
