/*
 * check_cancel: a thread cancelled anywhere in an allocation leaves the tracer consistent: no cancellation point inside a hook acts.
 */
#include "mt_test.h"

Suite *mt_suite_cancel(void)
{
	Suite *s = suite_create("cancel");

	return s;
}
