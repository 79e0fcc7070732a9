/*
 * wl_kill: 100 allocations of 777 bytes, then "ready" on stdout and a
 * long sleep: the test kills it with SIGKILL, and every allocation made
 * before "ready" must be in the trace.
 */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 100; i++)
		((char *)malloc(777))[0] = 1;
	if (write(1, "ready\n", 6) != 6)
		return 1;
	sleep(60);
	return 0;
}
