/*
 * wl_dlopen: the loader-lock trap.  Four threads allocate without pause
 * (every allocation unwinds, and unwinding reads the loader's tables)
 * while the main thread dlopens and dlcloses a library 200 times.  A
 * tracer lock taken in the wrong order against the loader's deadlocks
 * here; the test runs it under a timeout.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int stop;

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		free(malloc(48));
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 200; i++) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		void *h2 = dlopen("libz.so.1", RTLD_LAZY | RTLD_DEEPBIND);

		if (!h)
			return 2;
		dlclose(h);
		if (h2)
			dlclose(h2);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (write(1, "dlopen done\n", 12) != 12)
		return 3;
	return 0;
}
