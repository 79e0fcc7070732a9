/*
 * wl_subreaper C G: a child subreaper (PR_SET_CHILD_SUBREAPER) forks C
 * children; each allocates 6161 bytes, forks G grandchildren and exits at
 * once, so its grandchildren are orphans, reparented here; each
 * grandchild allocates 6262 bytes, sleeps 20 ms and exits.  It reaps with
 * wait() until ECHILD and prints "forked F reaped R": F = C + C * G the
 * processes it made, R every pid wait() gave it (the collectors of its
 * descendants are orphans too, and may be reaped here as well).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int c = argc > 2 ? atoi(argv[1]) : 3, g = argc > 2 ? atoi(argv[2]) : 2;
	int reaped = 0;
	pid_t p;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("prctl");
		return 3;
	}
	for (int i = 0; i < c; i++) {
		p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			free(malloc(6161));
			for (int j = 0; j < g; j++) {
				pid_t q = fork();

				if (q == 0) {
					struct timespec ts = { 0, 20 * 1000 * 1000 };

					free(malloc(6262));
					nanosleep(&ts, NULL);
					exit(0);
				}
			}
			exit(0);
		}
	}
	while ((p = wait(NULL)) > 0 || errno == EINTR)
		if (p > 0)
			reaped++;
	if (errno != ECHILD)
		return 1;
	printf("forked %d reaped %d\n", c + c * g, reaped);
	return 0;
}
