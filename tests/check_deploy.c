/*
 * check_deploy: the shapes a traced program is deployed in (a daemon, a container's pid 1, a subreaper, a service stopped by systemd, seccomp, no pidfd): the program runs as it does bare and its trace is whole.
 */
#include "mt_test.h"

Suite *mt_suite_deploy(void)
{
	Suite *s = suite_create("deploy");

	return s;
}
