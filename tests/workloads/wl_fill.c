/*
 * wl_fill N: N allocations of 100 bytes, each freed: 2N block events, a
 * trace of some 250 bytes an allocation, for a disk too small to hold
 * it.  Prints "fill: N" at the end.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long i = 0; i < n; i++)
		free(malloc(100));
	printf("fill: %ld\n", n);
	return 0;
}
