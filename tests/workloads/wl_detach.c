/*
 * wl_detach: a program that lets go of its stdout and stderr as a daemon
 * does (both to /dev/null), then goes on allocating until the file GO
 * exists.  The reader of its old stdout and stderr must see their end
 * while it runs: the collector holds none of its descriptors.  Usage:
 * wl_detach GO.  Exits 0, or 2 when GO never came (30 s).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int null;

	if (argc != 2)
		return 64;
	free(malloc(10));
	if (write(1, "detaching\n", 10) != 10)
		return 1;
	null = open("/dev/null", O_WRONLY);
	if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		return 1;
	close(null);
	for (int i = 0; i < 3000; i++) {
		struct timespec ms = { 0, 10 * 1000 * 1000 };

		free(malloc(100));
		if (access(argv[1], F_OK) == 0)
			return 0;
		nanosleep(&ms, NULL);
	}
	return 2;
}
