/*
 * wl_exit: five allocations of 555 bytes, then _exit(3): no destructor
 * runs, yet the trace ends with trace.stop (the preload's _exit) and is
 * cut to its length.
 */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 5; i++)
		((char *)malloc(555))[0] = 1;
	_exit(3);
}
