/*
 * wl_stripped: dlopens the library named by argv[1] (a copy of
 * libwl_strippable.so, stripped or not) and keeps one 4321-byte block
 * from its wl_strippable_run, which allocates in a static function.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *(*run)(size_t);
	void *h;

	if (argc != 2)
		return 64;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "wl_stripped: %s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "wl_strippable_run");
	if (!run || !run(4321))
		return 1;
	return 0; /* the block is kept, the library stays loaded */
}
