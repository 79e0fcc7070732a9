/*
 * wl_forkrules N [LIB_A LIB_B]: forks N children one after another, each
 * of which allocates from code its parent never allocates from
 * (child_work, through child_step) and exits; the parent waits for each
 * before the next.  With LIB_A and LIB_B (wl_dlreuse's plugins: the same
 * layout, other rules at one offset) the odd children dlopen LIB_A and
 * the even ones LIB_B, after the fork, and allocate through its
 * wl_dlreuse_alloc, printing "child I PLUGIN ADDRESS": siblings that
 * load other code at one address.  Prints "ok" when every child exited 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void child_step(int depth)
{
	void *volatile p;

	if (depth > 0) {
		child_step(depth - 1);
		return;
	}
	p = malloc(777);
	free(p);
}

__attribute__((noinline)) static void child_work(void)
{
	child_step(3);
}

static int child_plugin(int i, const char *lib)
{
	void *(*alloc)(size_t);
	void *h = dlopen(lib, RTLD_NOW), *volatile p;

	if (!h || !(alloc = (void *(*)(size_t))dlsym(h, "wl_dlreuse_alloc"))) {
		fprintf(stderr, "wl_forkrules: cannot load '%s'\n", lib);
		return 70;
	}
	for (int k = 0; k < 3; k++) {
		p = alloc(778);
		free(p);
	}
	printf("child %d %c %p\n", i, i % 2 ? 'a' : 'b', (void *)alloc);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0, st;
	void *volatile p = malloc(100);

	free(p);
	fflush(stdout);
	for (int i = 1; i <= n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 70;
		if (pid == 0) {
			child_work();
			exit(argc > 3 ? child_plugin(i, argv[i % 2 ? 2 : 3]) : 0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	printf("ok\n");
	return 0;
}
