/*
 * check_limits: resource limits and outputs a user may set (RLIMIT_FSIZE, an output that is a device): a trace, or one clear line for the whole tree.
 */
#include "mt_test.h"

Suite *mt_suite_limits(void)
{
	Suite *s = suite_create("limits");

	return s;
}
