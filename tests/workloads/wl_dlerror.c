/*
 * wl_dlerror: a program that asks dlerror() first thing, before any dl
 * call of its own, then looks a symbol up.  Bare, dlerror() has nothing
 * to say; under the preload it must say the same, and the lookup must
 * free no block the trace never saw allocated.  It prints what dlerror()
 * said and whether the lookup found printf.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *e = dlerror();

	printf("dlerror: %s\n", e ? e : "none");
	free(malloc(10));
	printf("found: %d\n", dlsym(RTLD_DEFAULT, "printf") != NULL);
	return 0;
}
