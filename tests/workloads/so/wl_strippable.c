/*
 * libwl_strippable.so: a static function between two exported ones, for
 * the naming tests (check_report.c), which strip a copy of this library.
 * In the copy, wl_strippable_first is the nearest exported symbol below
 * hidden_alloc and ends before it: the frame of hidden_alloc must be named
 * by its address in the library, not as wl_strippable_first+0x...;
 * wl_strippable_run keeps its name.  Functions come out in source order
 * at -O0, which the tests rely on.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int wl_strippable_first(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static void *hidden_alloc(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 0x5a, n);
	return p;
}

__attribute__((noinline)) void *wl_strippable_run(size_t n)
{
	return hidden_alloc(n);
}
