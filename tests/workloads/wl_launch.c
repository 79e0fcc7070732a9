/*
 * wl_launch SHAPE PROG [ARGS...]: run PROG in one of the shapes a
 * deployment gives it, traced: the launcher itself runs bare and puts
 * $WL_PRELOAD in LD_PRELOAD only for PROG's exec.  SHAPE is
 *
 *   nopidfd  a seccomp filter makes pidfd_open fail with ENOSYS, as on a
 *            kernel before 5.3 or under a container's seccomp profile;
 *   nofile6  RLIMIT_NOFILE soft and hard 6 (`ulimit -n 6`);
 *   novmclone a seccomp filter makes clone() with CLONE_VM fail with
 *            EPERM (fork's clone passes), as a sandbox may: the tracer
 *            cannot make the children it reads files in;
 *   pid1     PROG is pid 1 of new user and pid namespaces (as
 *            `unshare -rpf` makes it), the launcher waiting outside.
 *
 * Exits with PROG's status (128 + N for a death by signal N), or 77 with
 * one line on stderr when the shape cannot be made on this machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define CANNOT 77

static int deny_pidfd_open(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "wl_launch: cannot install a seccomp filter: %s\n",
			strerror(errno));
		return -1;
	}
	if (syscall(SYS_pidfd_open, getpid(), 0) >= 0 || errno != ENOSYS) {
		fprintf(stderr, "wl_launch: the seccomp filter leaves pidfd_open working\n");
		return -1;
	}
	return 0;
}

/* clone() with CLONE_VM in its flags fails with EPERM: threads, vfork
 * and the tracer's children that share the program's memory. */
static int deny_vm_clone(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		fprintf(stderr, "wl_launch: cannot install a seccomp filter: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* New user and pid namespaces, this process's uid and gid mapped to
 * themselves, so that the trace it creates has its owner. */
static int enter_namespaces(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0) {
		fprintf(stderr, "wl_launch: cannot make user and pid namespaces: %s\n",
			strerror(errno));
		return -1;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0 ||
	    write_file("/proc/self/setgroups", "deny\n") < 0)
		goto fail;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "wl_launch: cannot map the user namespace's ids: %s\n",
		strerror(errno));
	return -1;
}

static void run(char **argv)
{
	const char *preload = getenv("WL_PRELOAD");

	if (preload && setenv("LD_PRELOAD", preload, 1) < 0)
		_exit(CANNOT);
	execv(argv[0], argv);
	fprintf(stderr, "wl_launch: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: wl_launch nopidfd|nofile6|novmclone|pid1 PROG [ARGS...]\n");
		return 64;
	}
	if (!strcmp(argv[1], "nopidfd")) {
		if (deny_pidfd_open() < 0)
			return CANNOT;
		run(argv + 2);
	} else if (!strcmp(argv[1], "novmclone")) {
		if (deny_vm_clone() < 0)
			return CANNOT;
		run(argv + 2);
	} else if (!strcmp(argv[1], "nofile6")) {
		struct rlimit six = { 6, 6 };

		if (setrlimit(RLIMIT_NOFILE, &six) < 0) {
			fprintf(stderr, "wl_launch: cannot set RLIMIT_NOFILE: %s\n",
				strerror(errno));
			return CANNOT;
		}
		run(argv + 2);
	} else if (!strcmp(argv[1], "pid1")) {
		if (enter_namespaces() < 0)
			return CANNOT;
		pid = fork();
		if (pid < 0)
			return CANNOT;
		if (pid == 0)
			run(argv + 2);
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				return CANNOT;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	fprintf(stderr, "wl_launch: no shape '%s'\n", argv[1]);
	return 64;
}
