/*
 * memtrace-collector: the process that writes a traced program's trace.
 * The preload starts it (preload/mt_spawn.c) as
 *
 *   memtrace-collector NAME ROOT PID PIDFD    (fd 3: the ring)
 *
 * PIDFD is 4 when fd 4 is PID's pidfd, - when the program has none
 * (pidfd_open refused by an old kernel or a seccomp filter): the collector
 * then watches the program by its /proc entry.  Or `memtrace record`
 * starts it as the command's parent (mt_server.h):
 *
 *   memtrace-collector --record PRELOAD PATTERN -- CMD [ARGS]
 *
 * Never started by a person: it opens the trace (mt_out), says how that
 * went in the ring's header, drains the ring (mt_collect) and exits once
 * the trace is finished.  It must never signal or wait for the program,
 * never exit before every record the program published is written, unless
 * it cannot write, and never take a descriptor that is not a pidfd for the
 * program's: an operator's SIGTERM to the whole service (systemctl stop)
 * must not end it, only the program's end does.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/mt_ring.h"
#include "mt_collect.h"
#include "mt_drainer.h"
#include "mt_out.h"
#include "mt_server.h"

#define RING_FD 3
#define PIDFD 4

static void wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

/* Whether fd is a pidfd: its fdinfo has a Pid: line.  1 when that cannot
 * be read (no /proc): the preload's word is taken then. */
static int is_pidfd(int fd)
{
	char path[64], buf[1024];
	ssize_t n;
	int f;

	if (fcntl(fd, F_GETFD) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	return !strncmp(buf, "Pid:", 4) || strstr(buf, "\nPid:") != NULL;
}

/* /proc/PID/stat, opened while the program runs: its reads fail once the
 * process is reaped, whatever takes its pid next. */
static int open_stat(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int main(int argc, char **argv)
{
	mt_collect_t c = { .ring_fd = RING_FD, .pidfd = -1, .statfd = -1 };
	char path[sizeof(((mt_ring_hdr_t *)0)->path)] = "";
	mt_ring_hdr_t *h;
	struct stat st;
	sigset_t none;
	void *map;
	int rc;

	/* memtrace record: the command's signals and descriptors are the
	 * user's, untouched until the command is started (mt_server.c sets
	 * the server's own). */
	if (argc >= 6 && !strcmp(argv[1], "--record") && !strcmp(argv[4], "--"))
		return mt_server_run(argv[2], argv[3], argv + 5);
	/* An operator stops a service by signalling each of its processes
	 * (systemctl stop: SIGTERM to the cgroup), a terminal each of a
	 * session's: the collector ends when the program does, after
	 * writing what it recorded.  Set before the program's blocked
	 * signals, which came along through the exec, are let in. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	if (argc != 5) {
		fprintf(stderr, "usage: memtrace-collector NAME ROOT PID PIDFD (started by libmtpreload.so)\n"
				"       memtrace-collector --record PRELOAD PATTERN -- CMD [ARGS] (started by memtrace record)\n");
		return 64;
	}
	if (fstat(RING_FD, &st) < 0 || (size_t)st.st_size < MT_RING_HDR_SIZE) {
		fprintf(stderr, "memtrace-collector: no ring on fd 3\n");
		return 64;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   RING_FD, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "memtrace-collector: cannot map the ring: %s\n",
			strerror(errno));
		return 70;
	}
	h = map;
	if (h->magic != MT_RING_MAGIC || !h->nslots || (h->nslots & (h->nslots - 1)) ||
	    MT_RING_HDR_SIZE + h->nslots * MT_RING_SLOT > (uint64_t)st.st_size) {
		fprintf(stderr, "memtrace-collector: the ring on fd 3 is not one\n");
		return 64;
	}
	if (!strcmp(argv[4], "4") && is_pidfd(PIDFD))
		c.pidfd = PIDFD;
	c.hdr = h;
	c.slots = (mt_ring_slot_t *)((char *)map + MT_RING_HDR_SIZE);
	c.program = (pid_t)atoi(argv[3]);
	atomic_store(&h->collector_pid, (int32_t)getpid());
	/* Without it the program asks the kernel whether we live. */
	mt_drainer_take(h);
	rc = mt_out_open(&c.out, argv[1], argv[2][0] == '1', path, sizeof(path));
	memcpy(h->path, path, strlen(path) + 1);
	/* Our own copy: the header's is the program's to write. */
	c.path = path;
	c.made = argv[2][0] != '1';
	if (rc < 0) {
		atomic_store(&h->open_error, -rc);
		atomic_store(&h->state, MT_RING_FAILED);
		wake(&h->state);
		return 73;
	}
	/* The program waits for the state below: it is alive now. */
	if (c.pidfd < 0)
		c.statfd = open_stat(c.program);
	atomic_store(&h->state, MT_RING_WRITING);
	wake(&h->state);
	/* zstd workers where the CPUs we may use allow (mt_out.h), or the
	 * drain's thread alone where the pool cannot be made (the level is
	 * set): after the program goes on, which need not wait for the
	 * pool's buffers. */
	if (mt_out_compressed(c.out) &&
	    mt_out_set_zstd(c.out, MT_OUT_LEVEL, mt_out_workers_here()) < 0)
		mt_out_set_zstd(c.out, MT_OUT_LEVEL, 0);
	return mt_collect_run(&c) < 0 ? 74 : 0;
}
