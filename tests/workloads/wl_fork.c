/*
 * wl_fork: a parent that allocates, forks a child that allocates and
 * exits, then forks and execs itself ("exec" argument) so the exec'd
 * program traces itself.  Sizes mark who allocated:
 *   parent 2222 (x2, one leaked), forked child 3333 (x3), exec'd child
 *   4444 (x4, all leaked).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	void *keep;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec")) {
		for (int i = 0; i < 4; i++)
			memset(malloc(4444), 4, 4444);
		return 0;
	}
	keep = malloc(2222);
	free(malloc(2222));
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		void *a = malloc(3333), *b = malloc(3333), *c = malloc(3333);

		free(a);
		(void)b;
		(void)c;
		exit(0);
	}
	if (!wait_ok(pid))
		return 2;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	if (!wait_ok(pid))
		return 4;
	(void)keep;
	if (write(1, "fork done\n", 10) != 10)
		return 5;
	return 0;
}
