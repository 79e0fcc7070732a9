/*
 * wl_shape [--subreaper] [--nproc L --uid U] [--newpid [--kill-on TEXT]]
 * -- PROG [ARGS]: run PROG in a shape a test cannot make with a plain
 * exec.  --subreaper: PROG starts a child subreaper (the attribute
 * survives exec).  --nproc L --uid U: PROG runs as user and group U
 * (no supplementary groups) with RLIMIT_NPROC L.  --newpid: PROG is
 * pid 1 of a new pid namespace (with a new user namespace when a plain
 * one is refused), this process its parent, which exits with its status
 * (128 + N for signal N); --kill-on TEXT: PROG's stdout passes through
 * here, and the first line that begins with TEXT gets PROG a SIGKILL.
 * Exits 77 with "cannot ..." on stderr when the shape cannot be made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int subreaper = 0, newpid = 0, i, st, fds[2] = { -1, -1 };
	long nproc = -1, uid = -1;
	const char *kill_on = NULL;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--subreaper"))
			subreaper = 1;
		else if (!strcmp(argv[i], "--newpid"))
			newpid = 1;
		else if (!strcmp(argv[i], "--nproc") && i + 1 < argc)
			nproc = atol(argv[++i]);
		else if (!strcmp(argv[i], "--uid") && i + 1 < argc)
			uid = atol(argv[++i]);
		else if (!strcmp(argv[i], "--kill-on") && i + 1 < argc)
			kill_on = argv[++i];
		else
			return 64;
	}
	if (i + 1 >= argc)
		return 64;
	argv += i + 1;
	if (subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("cannot become a subreaper");
		return 77;
	}
	if (nproc >= 0) {
		struct rlimit rl = { (rlim_t)nproc, (rlim_t)nproc };

		if (setrlimit(RLIMIT_NPROC, &rl) != 0 || setgroups(0, NULL) != 0 ||
		    setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0 ||
		    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) {
			perror("cannot switch user");
			return 77;
		}
	}
	if (!newpid) {
		execvp(argv[0], argv);
		perror("cannot run");
		return 127;
	}
	if (unshare(CLONE_NEWPID) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
		perror("cannot make a pid namespace");
		return 77;
	}
	if (kill_on && pipe(fds) != 0)
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("cannot fork into the pid namespace");
		return 77;
	}
	if (pid == 0) {
		if (kill_on) {
			dup2(fds[1], 1);
			close(fds[0]);
			close(fds[1]);
		}
		execvp(argv[0], argv);
		perror("cannot run");
		_exit(127);
	}
	if (kill_on) {
		FILE *in;
		char line[256];

		close(fds[1]);
		in = fdopen(fds[0], "r");
		while (in && fgets(line, sizeof(line), in)) {
			fputs(line, stdout);
			fflush(stdout);
			if (!strncmp(line, kill_on, strlen(kill_on)))
				kill(pid, SIGKILL);
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}
