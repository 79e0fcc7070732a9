/*
 * mt_test_one: a runner for one suite, named by MT_ONLY_SUITE at compile
 * time (`make one-suite SUITE=cli`), so a suite can be worked on alone.
 */
#include <stdlib.h>

#include "mt_test.h"

#define SUITE_FN2(name) mt_suite_##name
#define SUITE_FN(name) SUITE_FN2(name)

Suite *SUITE_FN(MT_ONLY_SUITE)(void);

int main(void)
{
	SRunner *sr;
	int failed;

	mt_test_runner_init();
	sr = srunner_create(SUITE_FN(MT_ONLY_SUITE)());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
