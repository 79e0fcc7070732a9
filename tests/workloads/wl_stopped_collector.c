/*
 * wl_stopped_collector PID start|exit|kill: a child that starts (start,
 * kill) or ends (exit) while the collector PID is stopped (SIGSTOP).  With
 * exit the child is forked first, while the collector runs, and waits for
 * a word on a pipe; with start and kill it is forked once the collector is
 * stopped.  Each way the child allocates 4 blocks of 4242 bytes and frees
 * them; then it exits, or with kill it dies of SIGKILL.  The parent waits up to 3 s for the child's end, prints "child
 * ended" or "child still running", continues the collector (SIGCONT),
 * reaps the child and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child_work(void)
{
	void *volatile p[4];

	for (int i = 0; i < 4; i++)
		p[i] = malloc(4242);
	for (int i = 0; i < 4; i++)
		free(p[i]);
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	pid_t collector, child;
	int go[2], st, ended = 0;
	char c = 'g';

	int killed;

	if (argc < 3 || (strcmp(argv[2], "start") && strcmp(argv[2], "exit") &&
			 strcmp(argv[2], "kill")))
		return 64;
	killed = !strcmp(argv[2], "kill");
	collector = (pid_t)atoi(argv[1]);
	if (pipe(go) < 0)
		return 70;
	fflush(stdout);
	if (strcmp(argv[2], "exit") && kill(collector, SIGSTOP) < 0)
		return 70;
	child = fork();
	if (child < 0)
		return 70;
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(70);
		child_work();
		if (killed)
			raise(SIGKILL);
		exit(0);
	}
	if (!strcmp(argv[2], "exit") && kill(collector, SIGSTOP) < 0)
		return 70;
	if (write(go[1], &c, 1) != 1)
		return 70;
	for (int i = 0; i < 300 && !ended; i++) {
		if (waitpid(child, &st, WNOHANG) == child)
			ended = 1;
		else
			nanosleep(&nap, NULL);
	}
	printf("%s\n", ended ? "child ended" : "child still running");
	fflush(stdout);
	kill(collector, SIGCONT);
	if (!ended && waitpid(child, &st, 0) != child)
		return 70;
	if (killed)
		return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
