/*
 * wl_forkexit: four forked children, each allocating 3 blocks of 4321
 * bytes and ending in _exit(0) (no destructor, no atexit), as the
 * children of shells and of fork-and-work servers do; the parent waits
 * for them and exits 0.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	for (int i = 0; i < 4; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return 1;
		if (pid == 0) {
			for (int k = 0; k < 3; k++)
				((char *)malloc(4321))[0] = 1;
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 2;
	}
	return 0;
}
