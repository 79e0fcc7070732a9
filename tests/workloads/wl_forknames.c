/*
 * wl_forknames: a parent that forks three children one after another,
 * each allocating through the same frames and exiting, so the second
 * and third name frames the first named already.
 *
 *   wl_forknames            each child: 4 allocations of 5555 bytes
 *                           through three functions of this program and
 *                           one strdup (libc's frame)
 *   wl_forknames plugins    the same, then child 1 and 3 dlopen
 *                           libwl_dlreuse_a.so (beside this program),
 *                           child 2 libwl_dlreuse_b.so, and allocate 3
 *                           times through it; each child prints
 *                           "child N: PLUGIN at ADDR"
 */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*alloc_fn)(size_t);

static __attribute__((noinline)) void *wl_forknames_leaf(size_t n)
{
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void *wl_forknames_mid(size_t n)
{
	void *p = wl_forknames_leaf(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static __attribute__((noinline)) void wl_forknames_top(void)
{
	for (int i = 0; i < 4; i++)
		free(wl_forknames_mid(5555));
	free(strdup("wl_forknames"));
}

static void plugin(const char *argv0, int child)
{
	char which = child == 2 ? 'b' : 'a', path[4096];
	const char *slash = strrchr(argv0, '/');
	int dir = slash ? (int)(slash - argv0 + 1) : 0;
	struct link_map *map;
	alloc_fn fn;
	void *h;

	snprintf(path, sizeof(path), "%.*slibwl_dlreuse_%c.so", dir, argv0, which);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
		fprintf(stderr, "wl_forknames: %s\n", dlerror());
		_exit(1);
	}
	fn = (alloc_fn)dlsym(h, "wl_dlreuse_alloc");
	if (!fn) {
		fprintf(stderr, "wl_forknames: %s\n", dlerror());
		_exit(1);
	}
	for (int i = 0; i < 3; i++)
		free(fn(6666));
	printf("child %d: %c at %#lx\n", child, which, (unsigned long)map->l_addr);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int plugins = argc > 1 && !strcmp(argv[1], "plugins");

	free(malloc(1111));
	for (int child = 1; child <= 3; child++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			wl_forknames_top();
			if (plugins)
				plugin(argv[0], child);
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 2;
	}
	return 0;
}
