/*
 * wl_exec: the exec family's endings.
 *   wl_exec fail   an execv() that fails (ENOENT), then 2 more
 *                  allocations of 777 bytes and a normal exit: the trace
 *                  goes on past the failure as if it had not happened
 *   wl_exec self   3 allocations of 555 bytes, then execl() of itself
 *                  with "image": the same pid, a new image
 *   wl_exec image  4 allocations of 666 bytes, exit 0
 * Each prints what it is on stdout, written before any exec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void allocate(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		((char *)malloc(size))[0] = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "fail")) {
		char *args[] = { "absent", NULL };
		int err;

		allocate(1, 777);
		execv("/nonexistent/memtrace-absent", args);
		err = errno;
		allocate(2, 777);
		printf("exec failed: %s\n", strerror(err));
		return err == ENOENT ? 0 : 1;
	}
	if (!strcmp(mode, "self")) {
		allocate(3, 555);
		printf("pid %ld execs\n", (long)getpid());
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "image", (char *)NULL);
		return 127;
	}
	if (!strcmp(mode, "image")) {
		allocate(4, 666);
		printf("pid %ld is the new image\n", (long)getpid());
		return 0;
	}
	return 2;
}
