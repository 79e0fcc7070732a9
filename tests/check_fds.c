/*
 * check_fds: the tracer holds no descriptor of the program's (issue: descriptors).  Whatever the program closes, reopens or counts, its descriptor numbers and what it reads and writes through them are what they are bare.
 */
#include "mt_test.h"

Suite *mt_suite_fds(void)
{
	Suite *s = suite_create("fds");

	return s;
}
