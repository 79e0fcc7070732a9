/*
 * wl_oom_crash: a program with one unchecked allocation, for the
 * out-of-memory sweep.  Its first two allocations are checked (a failure
 * exits 1 cleanly); the third, in load_table_unchecked, is used without a
 * check, so when it fails the program writes through NULL and dies of
 * SIGSEGV.  Then two more, checked.  No failure: exit 0.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void out_of_memory(void)
{
	static const char msg[] = "wl_oom_crash: out of memory\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	exit(1);
}

__attribute__((noinline)) static char *checked(size_t n)
{
	char *p = malloc(n);

	if (!p)
		out_of_memory();
	return p;
}

/* The bug the sweep must find: no check of malloc's result. */
__attribute__((noinline)) static char *load_table_unchecked(size_t n)
{
	char *volatile table = malloc(n);

	memset(table, 0, n);
	return table;
}

int main(void)
{
	char *a = checked(32), *b = checked(48), *t = load_table_unchecked(512);
	char *c = checked(16), *d = checked(24);

	free(a);
	free(b);
	free(t);
	free(c);
	free(d);
	return 0;
}
