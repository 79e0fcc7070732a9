/*
 * wl_inl3: an allocation three calls deep, every call inlined: inner()
 * is inlined into middle(), middle() into main(), so the malloc's return
 * address is in main alone and only DWARF's inlined_subroutine scopes
 * say inner -> middle -> main.  Built -O2 -g as a user's program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) char *inner(size_t n)
{
	char *p = malloc(n); /* WL_INL3_INNER */

	if (p)
		memset(p, 'i', n);
	return p;
}

static inline __attribute__((always_inline)) char *middle(size_t n)
{
	char *p = inner(n + 1); /* WL_INL3_MIDDLE */

	if (p)
		p[n] = '\0';
	return p;
}

int main(int argc, char **argv)
{
	char *kept = middle((size_t)argc + 15); /* WL_INL3_MAIN */

	(void)argv;
	if (!kept)
		return 1;
	printf("%zu\n", strlen(kept));
	return 0;
}
