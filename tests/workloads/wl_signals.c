/*
 * wl_signals: signals whose default action ends the process.
 *   wl_signals term  the main thread allocates and frees without end; a
 *                    second thread, with SIGTERM blocked, sends the
 *                    process SIGTERM after 50 ms, so the signal lands on
 *                    the allocating thread (often inside the tracer):
 *                    the process dies of SIGTERM
 *   wl_signals pipe  writes to a pipe whose reader is gone: dies of
 *                    SIGPIPE
 *   wl_signals show  prints what sigaction() and signal() say of SIGINT,
 *                    SIGTERM, SIGPIPE and SIGHUP ("default" or "other"),
 *                    then handles a SIGINT of its own and exits 0
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *killer(void *arg)
{
	sigset_t set;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	kill(getpid(), SIGTERM);
	return NULL;
}

static volatile sig_atomic_t got;

static void on_int(int sig)
{
	got = sig;
}

static const char *what(void (*h)(int))
{
	return h == SIG_DFL ? "default" : h == SIG_IGN ? "ignored" : "other";
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "term")) {
		pthread_t t;

		((char *)malloc(999))[0] = 1;
		if (pthread_create(&t, NULL, killer, NULL))
			return 2;
		for (;;)
			free(malloc(64));
	}
	if (!strcmp(mode, "pipe")) {
		int fd[2];

		((char *)malloc(888))[0] = 1;
		if (pipe(fd))
			return 2;
		close(fd[0]);
		for (;;)
			if (write(fd[1], "x", 1) < 0)
				return 3; /* SIGPIPE did not end it */
	}
	if (!strcmp(mode, "show")) {
		static const int sigs[] = { SIGINT, SIGTERM, SIGPIPE, SIGHUP };
		static const char *const names[] = { "INT", "TERM", "PIPE", "HUP" };
		struct sigaction sa;
		void (*h)(int);

		for (int i = 0; i < 4; i++) {
			if (sigaction(sigs[i], NULL, &sa))
				return 2;
			printf("sigaction %s: %s\n", names[i], what(sa.sa_handler));
		}
		h = signal(SIGTERM, SIG_IGN);
		printf("signal TERM was: %s\n", what(h));
		h = signal(SIGTERM, SIG_DFL);
		printf("signal TERM then: %s\n", what(h));
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_int;
		if (sigaction(SIGINT, &sa, NULL))
			return 2;
		if (sigaction(SIGINT, NULL, &sa))
			return 2;
		printf("sigaction INT now: %s\n", what(sa.sa_handler));
		raise(SIGINT);
		printf("handled: %s\n", got == SIGINT ? "SIGINT" : "nothing");
		return 0;
	}
	return 2;
}
