/*
 * main: the memtrace executable; everything it does lives in mt_cli.
 */
#include <stdio.h>

#include "mt_cli.h"
#include "mt_mem.h"

int main(int argc, char **argv)
{
	int status;

	mt_mem_init_from_env();
	status = mt_cli_main(argc, argv);
	if (fflush(stdout) != 0 && status == 0)
		status = 73;
	return status;
}
