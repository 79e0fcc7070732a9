/*
 * wl_spawn: children started with posix_spawn and with vfork + exec, which
 * run no fork handlers.  Each child is this program again with "child":
 * it allocates 6 blocks of 6666 bytes.  The parent allocates one of 1234.
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int wait_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	char *child_argv[] = { argv[0], "child", NULL };
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		for (int i = 0; i < 6; i++)
			memset(malloc(6666), 6, 6666);
		return 0;
	}
	free(malloc(1234));
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ))
		return 1;
	if (!wait_ok(pid))
		return 2;
	pid = vfork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		execve("/proc/self/exe", child_argv, environ);
		_exit(127);
	}
	if (!wait_ok(pid))
		return 4;
	if (write(1, "spawn done\n", 11) != 11)
		return 5;
	return 0;
}
