/*
 * wl_abort: three allocations of 666 bytes, then abort(): the trace ends
 * with trace.stop reason "signal" and the process still dies of SIGABRT.
 */
#include <stdlib.h>

int main(void)
{
	for (int i = 0; i < 3; i++)
		((char *)malloc(666))[0] = 1;
	abort();
}
