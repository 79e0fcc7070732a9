/*
 * wl_oom_safe: a program that survives every allocation failure, for the
 * out-of-memory sweep.  It makes eight allocations, one through each
 * allocating function but valloc and pvalloc, checks every one, and on
 * a failure says which on stderr (with write(2): stdio could allocate),
 * frees what it holds and exits 1.  A failure whose errno is not ENOMEM
 * exits 3 instead, so a test sees that the preload set it.  All eight
 * succeed: exit 0.  With the argument "hang" a failure waits forever
 * instead of exiting, for the sweep's timeout.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS 8

static void say(const char *a, const char *b)
{
	if (write(2, a, strlen(a)) < 0 || write(2, b, strlen(b)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(4);
}

static int hang;

/* Report step's failure (err: its error number) and leave. */
static void fail(void **held, int n, const char *what, int err)
{
	for (int i = 0; i < n; i++)
		free(held[i]);
	say("wl_oom_safe: out of memory in ", what);
	while (hang)
		pause();
	exit(err == ENOMEM ? 1 : 3);
}

int main(int argc, char **argv)
{
	void *held[STEPS];
	int n = 0, rc;
	char *s;

	hang = argc > 1 && !strcmp(argv[1], "hang");
	if (!(held[n] = malloc(64)))
		fail(held, n, "malloc", errno);
	n++;
	if (!(held[n] = calloc(16, 8)))
		fail(held, n, "calloc", errno);
	n++;
	/* A failed realloc leaves the block as it was, still held. */
	if (!(s = realloc(held[0], 4096)))
		fail(held, n, "realloc", errno);
	held[0] = s;
	if (!(held[n] = strdup("a string that strdup copies with malloc")))
		fail(held, n, "strdup", errno);
	n++;
	if ((rc = posix_memalign(&held[n], 64, 128)))
		fail(held, n, "posix_memalign", rc);
	n++;
	if (!(held[n] = aligned_alloc(64, 256)))
		fail(held, n, "aligned_alloc", errno);
	n++;
	if (!(held[n] = memalign(32, 96)))
		fail(held, n, "memalign", errno);
	n++;
	if (!(held[n] = reallocarray(NULL, 10, 12)))
		fail(held, n, "reallocarray", errno);
	n++;
	for (int i = 0; i < n; i++)
		free(held[i]);
	return 0;
}
