/*
 * mt_server: `memtrace record`'s collector (mt_server.h).  It must never
 * reap a process but its command, never block on a traced process for
 * longer than a registration's message takes to arrive, and never end
 * while a ring it serves may still get records.
 */
#include "mt_server.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/mt_register.h"
#include "../common/mt_ring.h"
#include "mt_collect.h"
#include "mt_drainer.h"
#include "mt_out.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* How long the registration's message may take once a process has
 * connected: it sends it at once. */
#define REGISTER_TIMEOUT_S 2
/* The serve loop's nap once every ring is idle: NAP_MS after records,
 * twice as long at each idle wake, at most NAP_MAX_MS. */
#define NAP_MS 1
#define NAP_MAX_MS 16

/* A process registered that reads the answer (no pidfd to send, or this
 * process is outside its pid namespace): from then on the loop waits in
 * poll(), which a registration ends at once, rather than in a sleep. */
static int answer_awaited;
/* This process's pid and effective uid, asked once: a loop of short
 * processes takes two registrations a process. */
static pid_t self_pid;
static uid_t self_euid;
/* The zstd workers a trace whose program waits may have (workers_for()):
 * -1 until one first waits. */
static int server_workers = -1;

typedef struct ring {
	mt_collect_t c;
	int taken; /* its drainer word is in our robust list */
	char path[sizeof(((mt_ring_hdr_t *)0)->path)]; /* the trace's name */
	void *map;
	size_t map_len;
	int memfd, pidfd;
	struct ring *next;
} ring_t;

/*
 * SCHED_BATCH for this process from here on, when it was given the
 * normal policy (the command, forked before, keeps the policy record was
 * given; the zstd workers, started later, take this one).  A
 * registration's message that wakes this loop (look_after_nap()) is a
 * synchronous wakeup, which puts it on the CPU of the process that sent
 * it, and a normal task woken there preempts that process in the middle
 * of its start; a batch task woken waits for its turn (or for the other
 * CPU), and takes the same share of the CPU.  300 /bin/true from bash
 * under record, when every registration woke this loop, took 0.94x the
 * time (medians of 9 rounds).  A refusal (a seccomp filter of the
 * user's) changes nothing but that.
 */
static void batch_policy(void)
{
	struct sched_param sp = { 0 };

	/* A user who gave record a real-time or idle policy chose it. */
	if (sched_getscheduler(0) == SCHED_OTHER)
		(void)sched_setscheduler(0, SCHED_BATCH, &sp);
}

/*
 * The zstd workers for a trace whose program waits for room in its ring
 * (mt_collect_t's workers_for): the lone collector's (mt_out_workers_here()),
 * where there are any, once this process is a session of its own, which
 * the first such program makes it, when it may: it is not a process
 * group's leader (record started by a script, a CI job, sudo, strace or
 * timeout).
 *
 * Where Linux's autogroups apply (a process in the root cgroup), the
 * scheduler shares the CPUs between sessions first and weighs a task by
 * its nice value only within its own.  Out of the command's session this
 * process is a group of its own, as the lone collector is, and its
 * workers at nice 19 rank below its drain; in it they rank below the
 * program's threads, which starve them (mt-churn under record: 1.2 to
 * 1.5 s with workers in the command's session, a median of 0.67 out of
 * it, 0.77 with none).  Only a program that outruns the drain makes it
 * leave: a loop of short processes is served from the session it was
 * given (one of its own from the start took the loop 1.034 of the time,
 * 12 rounds).
 *
 * Leaving the session leaves the command's process group: the terminal's
 * ^C and ^\ were this process's to ignore, and a kill of the group still
 * reaches the command, whose tree this process waits for as ever.  A
 * group's leader (record started from an interactive shell, whose job it
 * leads) cannot leave, and gives no workers.
 */
static int workers_for(void)
{
	if (server_workers < 0) {
		int n = mt_out_workers_here();

		server_workers = n > 0 && getpgrp() != getpid() && setsid() >= 0 ? n : 0;
	}
	return server_workers;
}

/* Signals sent to record that go on to the command. */
static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
				 SIGWINCH };

/* Ignored while the command runs: ^C and ^\ are the command's (it ends
 * and record with it), and a write error is said, not a death. */
static const int ignored[] = { SIGINT, SIGQUIT, SIGPIPE, SIGXFSZ };

static volatile sig_atomic_t command_pid;

static void forward(int sig)
{
	int saved = errno;

	if (command_pid > 0)
		kill(command_pid, sig);
	errno = saved;
}

static void wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

static void ring_free(ring_t *r)
{
	if (r->taken)
		mt_drainer_release(r->map);
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->memfd >= 0)
		close(r->memfd);
	if (r->pidfd >= 0)
		close(r->pidfd);
	free(r);
}

/* The text of the small /proc file path, NUL-terminated, in buf: its
 * length, or -1. */
static ssize_t read_proc(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The pid, in this process's namespace, of the process a pidfd refers to
 * (its fdinfo's Pid line), or -1. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nPid:\t");
	return p ? (pid_t)atoi(p + 6) : -1;
}

/* The parent of pid (the program that made the registering go-between),
 * or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_proc(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* A pidfd of the peer connected on fd, as it was when it connected
 * (SO_PEERPIDFD), or -1.  *gone: the kernel has no pidfd to give because
 * the peer has been reaped (kernels that keep a reaped peer's pid give
 * one that says it has ended). */
static int peer_pidfd(int fd, int *gone)
{
	int pidfd = -1;
	socklen_t len = sizeof(pidfd);

	*gone = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && len == sizeof(pidfd))
		return pidfd;
	*gone = errno == ESRCH || errno == EINVAL;
	return -1;
}

/* Whether this kernel gives SO_PEERPIDFD on a UNIX socket: the name of
 * the socket says so to the preload (MT_REGISTER_PEER_PIDFD). */
static int peer_pidfd_given(void)
{
	int sv[2], pidfd, gone, ok;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	pidfd = peer_pidfd(sv[0], &gone);
	ok = pidfd >= 0;
	if (ok)
		close(pidfd);
	close(sv[0]);
	close(sv[1]);
	return ok;
}

/* The one byte of answer, on fd; -1: a sender that reads none. */
static void answer(int fd, char a)
{
	ssize_t w;

	if (fd < 0)
		return;
	do
		w = send(fd, &a, 1, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
}

/* Say FAILED (EPERM) in the ring on memfd fd, which is not served. */
static void refuse_ring(int fd)
{
	struct stat st;
	mt_ring_hdr_t *h;

	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < MT_RING_HDR_SIZE)
		return;
	h = mmap(NULL, MT_RING_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return;
	if (h->magic == MT_RING_MAGIC) {
		atomic_store(&h->open_error, EPERM);
		atomic_store(&h->state, MT_RING_FAILED);
		wake(&h->state);
	}
	munmap(h, MT_RING_HDR_SIZE);
}

/* A program that left its trace to this collector (mt_ring.h, detached)
 * is not there to print the message of a trace that could not be
 * written: this process says it, unless the program took it first. */
static void say_left_message(mt_ring_hdr_t *h)
{
	if (atomic_load(&h->detached) && h->message[0] && !atomic_exchange(&h->said, 1))
		fprintf(stderr, "memtrace: %.*s\n", (int)sizeof(h->message), h->message);
}

/*
 * Take the registration on fd, a connection just accepted: the ring
 * mapped and its trace opened, its state set; NULL when there is nothing
 * to serve (refused, malformed, or the trace could not be opened: the
 * ring's header says so then).
 */
static ring_t *take(int fd)
{
	mt_register_msg_t *msg = calloc(1, sizeof(*msg));
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { msg, sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct timeval tv = { REGISTER_TIMEOUT_S, 0 };
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fds[2] = { -1, -1 }, nfds = 0, rc, foreign = 0, sk = fd, gone = 0;
	ring_t *r = NULL;
	mt_ring_hdr_t *h;
	struct stat st;
	ssize_t n;

	if (!msg)
		goto refuse;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
		goto refuse;
	/* The message is sent before the connection is seen, but for a
	 * sender slow to send it: only that one is waited for, and not for
	 * long. */
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		do
			n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int got;

				memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (nfds < 2)
					fds[nfds++] = got;
				else
					close(got);
			}
	/* The head and a name of the message's own length, its NUL last. */
	if (n <= (ssize_t)offsetof(mt_register_msg_t, name) || msg->head.magic != MT_REGISTER_MAGIC ||
	    nfds < 1 || msg->name[n - offsetof(mt_register_msg_t, name) - 1] != '\0')
		goto refuse;
	if (!msg->head.nowait)
		answer_awaited = 1;
	else
		fd = -1; /* no answer is read */
	if (cr.uid != self_euid && cr.uid != 0) {
		foreign = 1;
		goto refuse;
	}
	if (!(r = calloc(1, sizeof(*r))))
		goto refuse;
	r->memfd = fds[0];
	r->c.statfd = -1; /* the serve loop polls the pidfd, or kill(2) */
	r->pidfd = msg->head.has_pidfd && nfds > 1 ? fds[1] : -1;
	if (!msg->head.has_pidfd && nfds > 1)
		close(fds[1]);
	fds[0] = fds[1] = -1;
	/* A program that registered itself without a pidfd, asked to be
	 * known by the connection's. */
	if (r->pidfd < 0 && msg->head.peer_pidfd && !msg->head.via_child)
		r->pidfd = peer_pidfd(sk, &gone);
	if (fstat(r->memfd, &st) < 0 || (size_t)st.st_size < MT_RING_HDR_SIZE)
		goto refuse;
	r->map_len = (size_t)st.st_size;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		goto refuse;
	}
	h = r->map;
	if (h->magic != MT_RING_MAGIC || !h->nslots || (h->nslots & (h->nslots - 1)) ||
	    MT_RING_HDR_SIZE + h->nslots * MT_RING_SLOT > (uint64_t)st.st_size)
		goto refuse;
	/* The program's pid as this process sees it.  A program that
	 * registered itself is the peer, and where its own pid is the one
	 * this process sees, the two namespaces agree: no need to ask /proc
	 * (its fdinfo read was a twentieth of this loop's CPU in a loop of
	 * short processes).  Otherwise the pidfd knows it whatever pid
	 * namespace the program is in; without one, the peer is the program
	 * or its go-between child, and the program waits for the answer, so
	 * its pid is still the program's when a pidfd of it is opened here
	 * (or the program has been reaped, gone: the pid its connection saw
	 * names its trace, and no pidfd is opened). */
	if (!msg->head.via_child && cr.pid > 0 && cr.pid == msg->head.pid) {
		r->c.program = cr.pid;
	} else if (r->pidfd >= 0) {
		r->c.program = pidfd_pid(r->pidfd);
		/* A program that did not wait may be reaped by now (Pid -1):
		 * its pidfd says it has ended, and the pid it sent names it. */
		if (r->c.program <= 0)
			r->c.program = msg->head.pid;
	} else {
		r->c.program = msg->head.via_child ? parent_of(cr.pid) : cr.pid;
	}
	if (r->c.program <= 0)
		goto refuse;
	/* Close-on-exec either way: received with MSG_CMSG_CLOEXEC, or
	 * made by pidfd_open(2). */
	if (r->pidfd < 0 && !gone)
		r->pidfd = (int)syscall(SYS_pidfd_open, r->c.program, 0);
	r->c.watched = r->pidfd >= 0 || gone; /* in the serve loop's poll */
	r->c.ended = gone;
	r->c.hdr = h;
	r->c.slots = (mt_ring_slot_t *)((char *)r->map + MT_RING_HDR_SIZE);
	r->c.pidfd = r->pidfd;
	r->c.ring_fd = r->memfd;
	r->c.shared = 1;
	r->c.timed = msg->head.stats != 0;
	atomic_store(&h->collector_pid, (int32_t)self_pid);
	/* Without it the program asks the kernel whether we live. */
	r->taken = mt_drainer_take(h) == 0;
	rc = mt_out_open(&r->c.out, msg->name, msg->head.root != 0, r->path, sizeof(r->path));
	memcpy(h->path, r->path, strlen(r->path) + 1);
	/* Our own copy: the header's is the program's to write. */
	r->c.path = r->path;
	r->c.made = !msg->head.root;
	if (rc < 0) {
		/* A program that did not wait for the answer is told nothing
		 * more: it stops tracing at its next look at the ring. */
		if (msg->head.nowait) {
			if (rc == -ENAMETOOLONG)
				fprintf(stderr, "memtrace: the trace name of process %d is too long; "
					"it runs untraced\n", (int)msg->head.pid);
			else
				fprintf(stderr, "memtrace: cannot open trace '%s'; process %d runs "
					"untraced\n", r->path[0] ? r->path : msg->name, (int)msg->head.pid);
		}
		atomic_store(&h->open_error, -rc);
		atomic_store(&h->state, MT_RING_FAILED);
		wake(&h->state);
		answer(fd, MT_REGISTER_TAKEN);
		ring_free(r);
		free(msg);
		return NULL;
	}
	atomic_store(&h->state, MT_RING_WRITING);
	wake(&h->state);
	r->c.workers_for = workers_for;
	if (mt_collect_open(&r->c) < 0) {
		mt_collect_close(&r->c);
		answer(fd, MT_REGISTER_TAKEN);
		ring_free(r);
		free(msg);
		return NULL;
	}
	answer(fd, MT_REGISTER_TAKEN);
	free(msg);
	return r;
refuse:
	answer(fd, MT_REGISTER_REFUSED);
	/* A program that did not wait learns it from its ring. */
	if (foreign && msg->head.nowait) {
		refuse_ring(fds[0]);
		fprintf(stderr, "memtrace: memtrace record's collector does not serve process %d "
			"(another user's); it runs untraced\n", (int)msg->head.pid);
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (r)
		ring_free(r);
	free(msg);
	return NULL;
}

/* Take every connection waiting on the listening socket. */
static void take_all(int lfd, ring_t **rings, size_t *nrings)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0 || errno == EINTR) {
		ring_t *r;

		if (fd < 0)
			continue;
		r = take(fd);
		close(fd);
		if (r) {
			/* The same process again: its exec succeeded, and
			 * the trace of the image before ends with its stop
			 * without a look at its maps. */
			for (ring_t *q = *rings; q; q = q->next)
				if (q->c.program == r->c.program)
					q->c.replaced = 1;
			r->next = *rings;
			*rings = r;
			(*nrings)++;
		}
	}
}

/* Prepend preload to LD_PRELOAD, leaving out any libmtpreload.so the
 * list already names (two copies of the preload in one process would
 * trace each other); set MEMTRACE_OUTPUT and MEMTRACE_RECORD. */
static int command_env(const char *preload, const char *pattern, const char *sock)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(preload) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(len), *w;
	int rc;

	if (!v)
		return -1;
	w = stpcpy(v, preload);
	for (const char *p = old ? old : ""; *p;) {
		size_t n, skip = strspn(p, ": ");
		const char *base;

		p += skip;
		n = strcspn(p, ": ");
		if (!n)
			break;
		base = memrchr(p, '/', n);
		base = base ? base + 1 : p;
		if ((size_t)(p + n - base) != strlen("libmtpreload.so") ||
		    memcmp(base, "libmtpreload.so", n - (size_t)(base - p))) {
			*w++ = ':';
			memcpy(w, p, n);
			w += n;
		}
		p += n;
	}
	*w = '\0';
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	if (rc < 0 || setenv("MEMTRACE_OUTPUT", pattern, 1) < 0 ||
	    setenv(MT_REGISTER_ENV, sock, 1) < 0)
		return -1;
	return 0;
}

/*
 * poll() of the loop's descriptors, after a nap of wait ms (-1: for
 * good) when none is ready yet.  While rings are served the nap is a
 * sleep, not a poll() that waits, unless a process waits for its
 * registration's answer: every registration, and every traced process's
 * end, would otherwise wake this loop from the CPU of the process that
 * sent it, which a short process's start and end pay for (and the
 * wakeup puts this loop on that CPU).  300 /bin/true from bash took 0.806
 * of the time, faster in 21 rounds of 21 (bench/compare-starts); a
 * process's end or the command's is seen at most NAP_MAX_MS later.  With
 * no ring to serve the poll() waits: an idle record never wakes.
 */
static int look_after_nap(struct pollfd *pfd, nfds_t n, int wait, int rings)
{
	struct timespec ts;
	int got;

	if (wait == 0 || answer_awaited || !rings)
		return poll(pfd, n, wait);
	got = poll(pfd, n, 0);
	if (got != 0)
		return got;
	if (wait < 0 || wait > NAP_MAX_MS)
		wait = NAP_MAX_MS;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)wait * 1000000L;
	nanosleep(&ts, NULL);
	return poll(pfd, n, 0);
}

int mt_server_run(const char *preload, const char *pattern, char *const cmd[])
{
	struct sigaction sa, given[sizeof(ignored) / sizeof(ignored[0])];
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char sock[MT_REGISTER_SOCKET_MAX + 1];
	sigset_t block, mask;
	ring_t *rings = NULL;
	size_t nrings = 0, cap = 0;
	struct pollfd *pfd = NULL;
	ring_t **polled = NULL;
	int lfd = -1, status = 0, ended = 0, cmdfd = -1, nap = NAP_MS;
	/* Whether the last poll() said the command may have ended, or a
	 * registration waits (1 where no poll() said otherwise): a loop
	 * that woke for its rings makes no waitpid() or accept4() that
	 * could only fail. */
	int look_cmd = 1, look_lfd = 1;
	uint64_t rnd = 0;
	pid_t pid;

	/* Every trace takes a 1 MiB line buffer, its compressed twin and a
	 * zstd context, and gives them back at its end: kept in the heap
	 * rather than mapped and unmapped (or trimmed) each time, the next
	 * trace's buffers are pages already there, not a fault a page. */
	(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	self_pid = getpid();
	self_euid = geteuid();
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	snprintf(sock, sizeof(sock), "memtrace-record-%d-%016llx%s", (int)getpid(),
		 (unsigned long long)rnd, peer_pidfd_given() ? MT_REGISTER_PEER_PIDFD : "");
	memcpy(addr.sun_path + 1, sock, strlen(sock));
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 ||
	    bind(lfd, (struct sockaddr *)&addr,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sock))) < 0 ||
	    listen(lfd, 128) < 0) {
		fprintf(stderr, "memtrace: record: cannot listen on a UNIX socket: %s\n",
			strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return 70;
	}
	if (command_env(preload, pattern, sock) < 0) {
		fprintf(stderr, "memtrace: record: %s\n", strerror(ENOMEM));
		close(lfd);
		return 70;
	}
	/* The forwarded signals wait until the command's pid is known. */
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &mask);
	/* A terminal's ^C and ^\ reach the command itself (it is in the
	 * foreground process group too); record waits for it to end.  So
	 * they are ignored before the fork: a process registers without
	 * waiting for this one, so the command may be running, and be
	 * interrupted, before this process runs again.  The command gets
	 * the dispositions record was given. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, &given[i]);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "memtrace: record: cannot start '%s': %s\n", cmd[0],
			strerror(errno));
		close(lfd);
		return 70;
	}
	if (pid == 0) {
		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			sigaction(ignored[i], &given[i], NULL);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "memtrace: record: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	command_pid = pid;
	batch_policy();
	/* The command's end wakes the loop (no SIGCHLD handler). */
	cmdfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (cmdfd >= 0)
		fcntl(cmdfd, F_SETFD, FD_CLOEXEC);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);

	for (;;) {
		int busy = 0, wait = -1;
		size_t n = 0, first;

		for (ring_t **p = &rings; *p;) {
			ring_t *r = *p;
			int st = mt_collect_step(&r->c);

			if (st == MT_COLLECT_DONE) {
				mt_collect_close(&r->c);
				say_left_message(r->c.hdr);
				*p = r->next;
				ring_free(r);
				nrings--;
				continue;
			}
			busy |= st == MT_COLLECT_BUSY;
			if (st == MT_COLLECT_IDLE) {
				int ms = mt_collect_wait_ms(&r->c);

				if (wait < 0 || ms < wait)
					wait = ms;
			}
			p = &r->next;
		}
		/*
		 * A writer can wake this loop only through a futex word of
		 * its ring (it holds no descriptor of ours), which poll()
		 * cannot wait on, and a thread to wait on the words would
		 * count against the user's RLIMIT_NPROC.  So the nap grows
		 * while no ring has records, and a writer that fills its
		 * ring meanwhile waits at most NAP_MAX_MS.  Registrations,
		 * ends and the command's end are looked for after the nap
		 * (look_after_nap()).
		 */
		if (busy) {
			wait = 0;
			nap = NAP_MS;
		} else if (nrings) {
			if (wait < 0 || wait > nap)
				wait = nap;
			nap = nap * 2 > NAP_MAX_MS ? NAP_MAX_MS : nap * 2;
		}
		if (!ended && cmdfd < 0 && (wait < 0 || wait > NAP_MAX_MS))
			wait = NAP_MAX_MS; /* the command's end is known only by looking */
		if (!ended && look_cmd) {
			int ws;
			pid_t got = waitpid(pid, &ws, WNOHANG);

			if (got == pid) {
				ended = 1;
				command_pid = 0;
				status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
			} else if (got < 0 && errno == ECHILD) {
				ended = 1;
				command_pid = 0;
				status = 70;
			}
		}
		if (ended && !nrings) {
			/* One last look for a registration under way. */
			take_all(lfd, &rings, &nrings);
			if (!nrings)
				break;
		}
		if (cap < nrings + 2) {
			struct pollfd *q = realloc(pfd, (nrings + 16) * sizeof(*q));
			ring_t **qr = q ? realloc(polled, (nrings + 16) * sizeof(*qr)) : NULL;

			if (q)
				pfd = q;
			if (qr) {
				polled = qr;
				cap = nrings + 16;
			}
		}
		if (pfd && polled && cap >= nrings + 2) {
			pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = ended ? -1 : cmdfd, .events = POLLIN };
			first = n;
			for (ring_t *r = rings; r; r = r->next)
				if (r->c.watched && !r->c.ended) {
					polled[n] = r;
					pfd[n++] = (struct pollfd){ .fd = r->pidfd, .events = POLLIN };
				}
			int got = look_after_nap(pfd, (nfds_t)n, wait, nrings > 0);

			look_lfd = got != 0 && (got < 0 || pfd[0].revents);
			look_cmd = cmdfd < 0 || got < 0 || (got > 0 && pfd[1].revents);
			if (got > 0) {
				nap = NAP_MS;
				for (size_t i = first; i < n; i++)
					if (pfd[i].revents)
						polled[i]->c.ended = 1;
			}
		} else {
			look_lfd = look_cmd = 1;
			/* No memory for the arrays: each ring on its own. */
			for (ring_t *r = rings; r; r = r->next)
				if (r->c.watched && !r->c.ended) {
					struct pollfd one = { .fd = r->pidfd, .events = POLLIN };

					r->c.ended = poll(&one, 1, 0) > 0;
				}
			if (!busy) {
				struct timespec ts = { 0, NAP_MS * 1000000L };

				nanosleep(&ts, NULL);
			}
		}
		if (look_lfd)
			take_all(lfd, &rings, &nrings);
	}
	if (cmdfd >= 0)
		close(cmdfd);
	close(lfd);
	free(pfd);
	free(polled);
	return status;
}
