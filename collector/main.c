/*
 * memtrace-collector: the process that writes a traced program's trace.
 * The preload starts it (preload/mt_spawn.c) as
 *
 *   memtrace-collector NAME ROOT PID    (fd 3: the ring, fd 4: PID's pidfd)
 *
 * or `memtrace record` starts it as the command's parent (mt_server.h):
 *
 *   memtrace-collector --record PRELOAD PATTERN -- CMD [ARGS]
 *
 * and never a person: it opens the trace (mt_out), says how that went in
 * the ring's header, drains the ring (mt_collect) and exits once the trace
 * is finished.  It must never signal or wait for the program, and never
 * exit before every record the program published is written, unless it
 * cannot write.
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
#include "mt_out.h"
#include "mt_server.h"

#define RING_FD 3
#define PIDFD 4

static void wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
	mt_collect_t c = { .ring_fd = RING_FD, .pidfd = PIDFD };
	char path[sizeof(((mt_ring_hdr_t *)0)->path)] = "";
	mt_ring_hdr_t *h;
	struct stat st;
	sigset_t none;
	void *map;
	int rc;

	/* memtrace record: the command's signals and descriptors are the
	 * user's, untouched until the command is started. */
	if (argc >= 6 && !strcmp(argv[1], "--record") && !strcmp(argv[4], "--"))
		return mt_server_run(argv[2], argv[3], argv + 5);
	/* The program's blocked signals came along through the exec. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	if (argc != 4) {
		fprintf(stderr, "usage: memtrace-collector NAME ROOT PID (started by libmtpreload.so)\n"
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
	if (fcntl(PIDFD, F_GETFD) < 0)
		c.pidfd = -1;
	c.hdr = h;
	c.slots = (mt_ring_slot_t *)((char *)map + MT_RING_HDR_SIZE);
	c.program = (pid_t)atoi(argv[3]);
	atomic_store(&h->collector_pid, (int32_t)getpid());
	rc = mt_out_open(&c.out, argv[1], argv[2][0] == '1', path, sizeof(path));
	memcpy(h->path, path, strlen(path) + 1);
	c.path = h->path;
	if (rc < 0) {
		atomic_store(&h->open_error, -rc);
		atomic_store(&h->state, MT_RING_FAILED);
		wake(&h->state);
		return 73;
	}
	atomic_store(&h->state, MT_RING_WRITING);
	wake(&h->state);
	return mt_collect_run(&c) < 0 ? 74 : 0;
}
