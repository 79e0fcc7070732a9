/*
 * wl_run_noexit: succeeds (status 0) yet leaves a caveated trace: two
 * allocations, then _exit(0), so no destructor writes trace.stop and the
 * trace is missing_stop_event.  memtrace-run --strict must fail on it.
 */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	((char *)malloc(321))[0] = 1;
	((char *)malloc(321))[0] = 1;
	_exit(0);
}
