/*
 * wl_sigchld K: a SIGCHLD handler that reaps with waitpid(-1, WNOHANG)
 * and counts both the signals and the pids it reaps; K forked children,
 * each allocating 5151 bytes twice and exiting.  SIGCHLD is blocked
 * while it forks, then it waits in sigsuspend() until the handler has
 * reaped K pids, and waitpid(-1) must then say ECHILD.  Prints
 * "forked K reaped R foreign F echild E signals S": R the pids reaped,
 * F those that were not its own children, E 1 when the last wait found
 * no child, S the SIGCHLDs handled (1 to K: signals merge).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX 64

static pid_t kids[MAX];
static volatile sig_atomic_t reaped, foreign, signals;
static int nkids;

static void on_chld(int sig)
{
	int saved = errno;
	pid_t p;

	(void)sig;
	signals++;
	while ((p = waitpid(-1, NULL, WNOHANG)) > 0) {
		int ours = 0;

		for (int i = 0; i < nkids; i++)
			ours |= kids[i] == p;
		if (ours)
			reaped++;
		else
			foreign++;
	}
	errno = saved;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t block, old;
	int k = argc > 1 ? atoi(argv[1]) : 4, echild;

	if (k < 1 || k > MAX)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (int i = 0; i < k; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0) {
			void *a = malloc(5151), *b = malloc(5151);

			free(a);
			free(b);
			exit(0);
		}
		kids[nkids++] = p;
	}
	while (reaped + foreign < k)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	echild = waitpid(-1, NULL, 0) < 0 && errno == ECHILD;
	printf("forked %d reaped %d foreign %d echild %d signals %d\n", k,
	       (int)reaped, (int)foreign, echild, (int)signals);
	return 0;
}
