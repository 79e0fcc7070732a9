/*
 * wl_selfterm N [ns]: N allocations of 64 bytes (each freed), a SIGTERM
 * to itself with its action the default, N more, then "survived" on
 * stdout and exit 0.  Only as pid 1 of a pid namespace does it get there:
 * the kernel drops a default-action signal sent to a namespace's init
 * from inside; anywhere else it dies of the SIGTERM.
 *
 * With ns, it makes new user and pid namespaces itself and does all that
 * in a forked child, pid 1 there (a process that becomes an init after
 * its tracer started), and exits with the child's status; 77 with one
 * line on stderr when the namespaces cannot be made here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

static int enter_namespaces(void)
{
	char map[64];
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0) {
		fprintf(stderr, "wl_selfterm: cannot make user and pid namespaces: %s\n",
			strerror(errno));
		return -1;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (write_file("/proc/self/uid_map", map) < 0 ||
	    write_file("/proc/self/setgroups", "deny\n") < 0)
		goto fail;
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "wl_selfterm: cannot map the user namespace's ids: %s\n",
		strerror(errno));
	return -1;
}

static int work(long n)
{
	for (long i = 0; i < n; i++)
		free(malloc(64));
	kill(getpid(), SIGTERM);
	for (long i = 0; i < n; i++)
		free(malloc(64));
	printf("survived\n");
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	pid_t pid;
	int st;

	if (argc < 3 || strcmp(argv[2], "ns"))
		return work(n);
	if (enter_namespaces() < 0)
		return 77;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 77;
	if (pid == 0)
		exit(work(n));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 77;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
