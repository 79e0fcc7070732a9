/*
 * wl_dlreuse: a plugin unloaded and another loaded at its address.  It
 * dlopens libwl_dlreuse_a.so (beside this program), allocates through
 * its three frames, dlcloses it, dlopens libwl_dlreuse_b.so, which has
 * other unwind rules at the same offsets (see so/wl_dlreuse_a.c), and,
 * if the loader put it where the first was, allocates through it.  It
 * tries five times and prints "reused" or "not reused".
 */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*alloc_fn)(size_t);

/* The plugin name (a or b) beside argv0, loaded: its handle, entry
 * point and load address, or exit 1. */
static void *load(const char *argv0, char which, alloc_fn *fn, ElfW(Addr) *base)
{
	char path[4096];
	const char *slash = strrchr(argv0, '/');
	int dir = slash ? (int)(slash - argv0 + 1) : 0;
	struct link_map *map;
	void *h;

	snprintf(path, sizeof(path), "%.*slibwl_dlreuse_%c.so", dir, argv0, which);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
		fprintf(stderr, "wl_dlreuse: %s\n", dlerror());
		exit(1);
	}
	*fn = (alloc_fn)dlsym(h, "wl_dlreuse_alloc");
	if (!*fn) {
		fprintf(stderr, "wl_dlreuse: %s\n", dlerror());
		exit(1);
	}
	*base = map->l_addr;
	return h;
}

/* Allocations through the plugin's frames, so their rules are read. */
static void use(alloc_fn fn)
{
	for (int i = 0; i < 20; i++)
		free(fn(32 + (size_t)i));
}

int main(int argc, char **argv)
{
	(void)argc;
	for (int attempt = 0; attempt < 5; attempt++) {
		ElfW(Addr) a_base, b_base;
		alloc_fn a, b;
		void *ha = load(argv[0], 'a', &a, &a_base), *hb;

		use(a);
		if (dlclose(ha) != 0) {
			fprintf(stderr, "wl_dlreuse: %s\n", dlerror());
			return 1;
		}
		hb = load(argv[0], 'b', &b, &b_base);
		if (b_base == a_base) {
			use(b);
			dlclose(hb);
			printf("reused\n");
			return 0;
		}
		dlclose(hb);
	}
	printf("not reused\n");
	return 0;
}
