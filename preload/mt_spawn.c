/*
 * mt_spawn: the collector's start (mt_spawn.h says why it is made this
 * way).  It must never call malloc or a hooked function, never leave a
 * descriptor or a child behind in the program, and never let a signal
 * handler of the program run in one of its children.
 */
#include "mt_spawn.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/mt_fmt.h"
#include "../common/mt_register.h"
#include "mt_child_stack.h"
#include "mt_clock.h"
#include "mt_prefault.h"
#include "mt_real.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define STACK_LEN (64u << 10)

static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	return mt_real_syscall6(n, a, b, c, d, e, f);
}

int mt_spawn_find(char *path, size_t cap)
{
	const char *env = getenv("MEMTRACE_COLLECTOR");
	static const char *const tails[] = {
		"/" MT_SPAWN_COLLECTOR, "/../libexec/memtrace/" MT_SPAWN_COLLECTOR
	};
	char first[4096] = "";
	Dl_info info;
	size_t dir;

	if (env && *env) {
		if (strlen(env) + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(path, env, strlen(env) + 1);
		return access(path, X_OK) ? -errno : 0;
	}
	if (!dladdr((void *)mt_spawn_find, &info) || !info.dli_fname ||
	    !strchr(info.dli_fname, '/')) {
		ssize_t n = readlink("/proc/self/exe", first, sizeof(first) - 1);

		if (n <= 0)
			return -ENOENT;
		first[n] = '\0';
	} else {
		if (strlen(info.dli_fname) + 1 > sizeof(first))
			return -ENAMETOOLONG;
		memcpy(first, info.dli_fname, strlen(info.dli_fname) + 1);
	}
	dir = (size_t)(strrchr(first, '/') - first);
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t k = strlen(tails[i]);

		if (dir + k + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(path, first, dir);
		memcpy(path + dir, tails[i], k + 1);
		if (!access(path, X_OK))
			return 0;
	}
	/* Name the first place looked at in the caller's warning. */
	memcpy(path + dir, tails[0], strlen(tails[0]) + 1);
	return -ENOENT;
}

typedef struct {
	const char *collector;
	char **argv;
	pid_t program;
	uint64_t nslots, t0;
	size_t map_len;
	char *stack2;
	/* Registration with memtrace record's collector instead. */
	const char *sock;
	const char *name;
	int root;
	int alone; /* registers from the program's own table */
	int stats; /* the program prints the collector's account */
	int nowait; /* registered without waiting for the answer */
	int notsc; /* the spawning thread forbids RDTSC for itself */
	/* Results, written by the children into the shared memory. */
	void *map;
	pid_t collector_pid;
	int err; /* -errno */
	int memfd, pidfd;
} spawn_t;

/* The collector: out of the session, then the exec with the descriptors
 * its go-between placed.  Signals stay blocked through it: the collector
 * unblocks them, its handlers being its own by then.  A thread's
 * PR_TSC_SIGSEGV passes through fork and exec, and the collector reads
 * its clock through the vDSO, which executes RDTSC: it is allowed again
 * there, the one call made only where it was forbidden. */
static int collector_child(void *arg)
{
	spawn_t *s = arg;
	static char *const envp[] = { NULL };

	sys(SYS_setsid, 0, 0, 0, 0, 0, 0);
	if (s->notsc)
		sys(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0, 0);
	s->err = (int)sys(SYS_execve, (long)s->collector, (long)s->argv,
			  (long)envp, 0, 0, 0);
	sys(SYS_exit, 127, 0, 0, 0, 0, 0);
	return 127;
}

/* Put descriptor fd at number at, inherited through exec; -errno. */
static long place(long fd, int at)
{
	long rc;

	if (fd < 0)
		return fd;
	if (fd == at)
		return sys(SYS_fcntl, fd, F_SETFD, 0, 0, 0, 0) < 0 ? -EBADF : at;
	rc = sys(SYS_dup2, fd, at, 0, 0, 0, 0);
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	return rc;
}

/*
 * The go-between's descriptor table, a copy of the program's, made the
 * collector's: /dev/null on 0 to 2 (none of the program's files: a pipe's
 * reader would wait for the collector), the ring on 3, the program's
 * pidfd on 4 or nothing there, nothing else.  The program's descriptors
 * are closed first and the soft RLIMIT_NOFILE raised to the hard one
 * (this process's own), so that a program with many descriptors or a
 * small limit (`ulimit -n 6`) still leaves 3 and 4 free.  Returns the
 * memfd's number (3) or -errno; *pidfd is 1 when 4 holds the pidfd.
 */
static long collector_table(pid_t program, int *pidfd)
{
	struct rlimit lim;
	long fd, null;

	if (sys(SYS_close_range, 3, ~0u, 0, 0, 0, 0) < 0)
		for (long i = 3; i < 65536; i++)
			sys(SYS_close, i, 0, 0, 0, 0, 0);
	if (sys(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&lim, 0, 0) == 0 &&
	    lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		sys(SYS_prlimit64, 0, RLIMIT_NOFILE, (long)&lim, 0, 0, 0);
	}
	/* Without /dev/null (a bare chroot) 0 to 2 stay the program's. */
	null = sys(SYS_open, (long)"/dev/null", O_RDWR, 0, 0, 0, 0);
	if (null >= 0) {
		for (long i = 0; i < 3; i++)
			if (i != null)
				sys(SYS_dup2, null, i, 0, 0, 0, 0);
		if (null > 2)
			sys(SYS_close, null, 0, 0, 0, 0, 0);
	}
	fd = place(sys(SYS_memfd_create, (long)"memtrace-ring", 0, 0, 0, 0, 0), 3);
	if (fd < 0)
		return fd;
	*pidfd = place(sys(SYS_pidfd_open, program, 0, 0, 0, 0, 0), 4) == 4;
	return fd;
}

/* The ring on the memfd fd: sized, mapped into the (shared) memory, its
 * header set.  Returns the mapping, or 0 with s->err set. */
static long map_ring(spawn_t *s, long fd)
{
	long map;

	/* RLIMIT_FSIZE bounds a memfd's size too (and a program may have set
	 * it small): this process's own soft limit is raised as far as the
	 * hard one for the ftruncate, then put back, so the collector writes
	 * under the program's limit. */
	{
		struct rlimit old, raised;

		if (sys(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, (long)&old, 0, 0) == 0 &&
		    old.rlim_cur != RLIM_INFINITY && old.rlim_cur < s->map_len) {
			raised = (struct rlimit){ old.rlim_max, old.rlim_max };
			sys(SYS_prlimit64, 0, RLIMIT_FSIZE, (long)&raised, 0, 0, 0);
			s->err = (int)sys(SYS_ftruncate, fd, (long)s->map_len, 0, 0, 0, 0);
			sys(SYS_prlimit64, 0, RLIMIT_FSIZE, (long)&old, 0, 0, 0);
		} else {
			s->err = (int)sys(SYS_ftruncate, fd, (long)s->map_len, 0, 0, 0, 0);
		}
	}
	if (s->err < 0)
		return 0;
	map = sys(SYS_mmap, 0, (long)s->map_len, PROT_READ | PROT_WRITE,
		  MAP_SHARED, fd, 0);
	if (map < 0 && map > -4096) {
		s->err = (int)map;
		return 0;
	}
	/* The header's first page made resident before its first write: a
	 * fault on a new page of the memfd cost more than populating it (30
	 * us against 12 for it and the first step's, in a guest that shadows
	 * page tables).  Its second holds only a long name's tail. */
	mt_prefault_range((void *)map, MT_RING_HDR_HOT);
	{
		mt_ring_hdr_t *h = (mt_ring_hdr_t *)map;

		h->magic = MT_RING_MAGIC;
		h->nslots = s->nslots;
		h->t0 = s->t0;
	}
	return map;
}

/* The go-between: the memfd and the pidfd in its own table, the mapping
 * in the shared memory, then the collector as its vfork child. */
static int middle_child(void *arg)
{
	spawn_t *s = arg;
	long fd, map;
	pid_t pid;
	int pidfd = 0;

	fd = collector_table(s->program, &pidfd);
	if (fd < 0) {
		s->err = (int)fd;
		goto out;
	}
	s->memfd = (int)fd;
	s->pidfd = pidfd ? 4 : -1;
	/* The collector is told whether 4 is the program's pidfd: it must
	 * never take anything else for one. */
	s->argv[4] = pidfd ? "4" : "-";
	map = map_ring(s, fd);
	if (!map)
		goto out;
	pid = clone(collector_child, s->stack2 + STACK_LEN, CLONE_VM | CLONE_VFORK, s);
	if (pid < 0 || s->err < 0) {
		if (!s->err)
			s->err = -EAGAIN;
		sys(SYS_munmap, map, (long)s->map_len, 0, 0, 0, 0);
		goto out;
	}
	s->map = (void *)map;
	s->collector_pid = pid;
out:
	sys(SYS_exit, 0, 0, 0, 0, 0, 0);
	return 0;
}

/*
 * The registration with memtrace record's collector (common/mt_register.h),
 * in a table of descriptors no thread of the program uses: the go-between's
 * own, or a forked child's before fork() returns in it (it has one thread
 * then).  Every descriptor it opens is closed before it returns.
 */
static void register_ring(spawn_t *s)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mt_register_head_t msg = { .magic = MT_REGISTER_MAGIC };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control;
	/* The head, then the name and its NUL: a message of the name's
	 * own length, none of it copied (common/mt_register.h). */
	struct iovec iov[2] = { { &msg, sizeof(msg) },
				{ (void *)s->name, strlen(s->name) + 1 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2,
			     .msg_control = control.buf };
	struct cmsghdr *cm;
	struct ucred cr = { 0 };
	socklen_t crlen = sizeof(cr);
	size_t k = strlen(s->sock), nfds, m = sizeof(MT_REGISTER_PEER_PIDFD) - 1;
	long map = 0, sk = -1, n;
	char a = 0;
	/* The collector takes a pidfd of the sender from the connection:
	 * where the sender is the program, it need not open one (a pidfd's
	 * file is a tenth of a short process's registration). */
	int peer = s->alone && k >= m && !memcmp(s->sock + k - m, MT_REGISTER_PEER_PIDFD, m);

	s->memfd = s->pidfd = -1;
	n = sys(SYS_memfd_create, (long)"memtrace-ring", MFD_CLOEXEC, 0, 0, 0, 0);
	if (n < 0) {
		s->err = (int)n;
		goto out;
	}
	s->memfd = (int)n;
	map = map_ring(s, n);
	if (!map)
		goto out;
	if (!peer)
		s->pidfd = (int)sys(SYS_pidfd_open, s->program, 0, 0, 0, 0, 0);
	msg.peer_pidfd = (uint32_t)peer;
	msg.pid = s->program;
	msg.root = (uint32_t)s->root;
	msg.has_pidfd = s->pidfd >= 0;
	msg.via_child = !s->alone;
	msg.stats = (uint32_t)s->stats;
	nfds = s->pidfd >= 0 ? 2 : 1;
	mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), &s->memfd, sizeof(int));
	if (nfds == 2)
		memcpy(CMSG_DATA(cm) + sizeof(int), &s->pidfd, sizeof(int));
	memcpy(addr.sun_path + 1, s->sock, k);
	sk = sys(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, 0, 0, 0);
	if (sk < 0) {
		s->err = (int)sk;
		goto out;
	}
	n = sys(SYS_connect, sk, (long)&addr,
		(long)(offsetof(struct sockaddr_un, sun_path) + 1 + k), 0, 0, 0);
	if (n < 0) {
		s->err = -ECONNREFUSED;
		goto out;
	}
	/* The collector's pid as this process sees it (0 when it is outside
	 * the program's pid namespace): whether it still runs. */
	sys(SYS_getsockopt, sk, SOL_SOCKET, SO_PEERCRED, (long)&cr, (long)&crlen, 0);
	/* Without waiting for the answer the program relies on the pidfd to
	 * be known by, and on the collector's pid to learn that it died
	 * before it took the ring's drainer word (mt_record.c): it waits when
	 * it has not both. */
	msg.nowait = (s->pidfd >= 0 || peer) && cr.pid > 0;
	do
		n = sys(SYS_sendmsg, sk, (long)&mh, MSG_NOSIGNAL, 0, 0, 0);
	while (n == -EINTR);
	if (n != (long)(iov[0].iov_len + iov[1].iov_len)) {
		s->err = -ECONNREFUSED;
		goto out;
	}
	/* With a pidfd sent the program goes on at once: the collector
	 * takes the ring whenever it comes to it, even after the program
	 * has ended (common/mt_register.h). */
	if (!msg.nowait) {
		do
			n = sys(SYS_recvfrom, sk, (long)&a, 1, 0, 0, 0);
		while (n == -EINTR);
		if (n != 1 || a != MT_REGISTER_TAKEN) {
			s->err = n == 1 ? -EPERM : -ECONNREFUSED;
			goto out;
		}
	}
	s->nowait = (int)msg.nowait;
	s->map = (void *)map;
	s->collector_pid = cr.pid;
	map = 0;
out:
	if (map)
		sys(SYS_munmap, map, (long)s->map_len, 0, 0, 0, 0);
	if (sk >= 0)
		sys(SYS_close, sk, 0, 0, 0, 0, 0);
	if (s->memfd >= 0)
		sys(SYS_close, s->memfd, 0, 0, 0, 0, 0);
	if (s->pidfd >= 0)
		sys(SYS_close, s->pidfd, 0, 0, 0, 0, 0);
}

static int register_child(void *arg)
{
	register_ring(arg);
	sys(SYS_exit, 0, 0, 0, 0, 0, 0);
	return 0;
}

/*
 * Run fn(s) in a child sharing our memory but not our descriptor table
 * (clone with CLONE_VM|CLONE_VFORK and no exit signal), on the stack that
 * ends at top, and reap it (__WALL: it sent no SIGCHLD).  The caller has
 * blocked every signal: no handler of the program may run in the child.
 */
static void in_child(int (*fn)(void *), char *top, spawn_t *s)
{
	long got;
	int st;
	pid_t pid = clone(fn, top, CLONE_VM | CLONE_VFORK, s);

	if (pid < 0) {
		s->err = -errno;
		return;
	}
	do
		got = sys(SYS_wait4, pid, (long)&st, __WALL, 0, 0, 0);
	while (got == -EINTR);
}

int mt_spawn_collector(const char *collector, const char *name, int root,
		       uint64_t nslots, uint64_t t0, mt_spawn_ring_t *r)
{
	char pid_s[MT_FMT_U64_MAX + 1];
	char *argv[] = { MT_SPAWN_COLLECTOR, (char *)name, root ? "1" : "0",
			 pid_s, "-", NULL };
	spawn_t s = { .collector = collector, .argv = argv, .nslots = nslots,
		      .t0 = t0, .memfd = -1, .pidfd = -1 };
	uint64_t all = MT_REAL_SIGSET_ALL, old;
	int saved = errno;
	long stacks;

	s.program = (pid_t)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	s.notsc = mt_clock_thread_forbids_tsc();
	pid_s[mt_fmt_u64(pid_s, (uint64_t)s.program)] = '\0';
	s.map_len = MT_RING_HDR_SIZE + nslots * MT_RING_SLOT;
	stacks = mt_child_stack_map(2 * STACK_LEN);
	if (stacks < 0 && stacks > -4096)
		return (int)stacks;
	s.stack2 = (char *)stacks + STACK_LEN;
	/* No handler of the program may run in a child sharing its memory. */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
	in_child(middle_child, (char *)stacks + STACK_LEN, &s);
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	mt_child_stack_unmap(stacks, 2 * STACK_LEN);
	errno = saved;
	if (!s.map)
		return s.err ? s.err : -EAGAIN;
	r->hdr = s.map;
	r->slots = (mt_ring_slot_t *)((char *)s.map + MT_RING_HDR_SIZE);
	r->map_len = s.map_len;
	r->collector = s.collector_pid;
	r->nowait = 0;
	return 0;
}

int mt_spawn_register(const char *sock, const char *name, int root,
		      uint64_t nslots, uint64_t t0, int alone, int stats, mt_spawn_ring_t *r)
{
	spawn_t s = { .sock = sock, .name = name, .root = root, .alone = alone, .stats = stats,
		      .nslots = nslots, .t0 = t0, .memfd = -1, .pidfd = -1 };
	uint64_t all = MT_REAL_SIGSET_ALL, old;
	int saved = errno;
	long stack = 0;

	if (strlen(sock) > MT_REGISTER_SOCKET_MAX ||
	    strlen(name) >= MT_REGISTER_NAME_MAX)
		return -ENAMETOOLONG;
	s.program = (pid_t)sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	s.map_len = MT_RING_HDR_SIZE + nslots * MT_RING_SLOT;
	/* No handler of the program may run in the middle of it. */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
	if (alone) {
		register_ring(&s);
	} else {
		stack = mt_child_stack_map(STACK_LEN);
		if (stack < 0 && stack > -4096) {
			s.err = (int)stack;
			stack = 0;
		} else {
			in_child(register_child, (char *)stack + STACK_LEN, &s);
		}
	}
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	if (stack)
		mt_child_stack_unmap(stack, STACK_LEN);
	errno = saved;
	if (!s.map)
		return s.err ? s.err : -ECONNREFUSED;
	r->hdr = s.map;
	r->slots = (mt_ring_slot_t *)((char *)s.map + MT_RING_HDR_SIZE);
	r->map_len = s.map_len;
	r->collector = s.collector_pid;
	r->nowait = s.nowait;
	return 0;
}

void mt_spawn_unmap(mt_spawn_ring_t *r)
{
	if (r->hdr)
		sys(SYS_munmap, (long)r->hdr, (long)r->map_len, 0, 0, 0, 0);
	r->hdr = NULL;
	r->slots = NULL;
}
