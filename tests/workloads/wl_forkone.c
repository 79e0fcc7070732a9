/*
 * wl_forkone: allocates 3030 bytes, forks one child that allocates 3131
 * bytes and exits, waits for it; prints "forked" or why not (exit 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int st;
	pid_t p;

	free(malloc(3030));
	p = fork();
	if (p < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (p == 0) {
		free(malloc(3131));
		exit(0);
	}
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("forked\n");
	return 0;
}
