/*
 * mt_nofd: file reads with no descriptor in the program's table
 * (mt_nofd.h says why).  It must never call malloc or a hooked function,
 * never leave a child behind, and never let a signal handler of the
 * program run in its child.
 */
#include "mt_nofd.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "mt_child_stack.h"
#include "mt_real.h"

#define STACK_LEN (64u << 10)

_Atomic int mt_nofd_refused;
/* Set only while the process has one thread (mt_nofd_set_alone). */
static int alone;

void mt_nofd_set_alone(int on)
{
	alone = on;
}

int mt_nofd_alone(void)
{
	return alone;
}

static long sys(long n, long a, long b, long c, long d, long e, long f)
{
	return mt_real_syscall6(n, a, b, c, d, e, f);
}

typedef struct {
	long (*fn)(void *);
	void *arg;
	long result;
} run_t;

static int child(void *p)
{
	run_t *r = p;

	r->result = r->fn(r->arg);
	sys(SYS_exit, 0, 0, 0, 0, 0, 0);
	return 0;
}

long mt_nofd_run(long (*fn)(void *), void *arg)
{
	run_t r = { fn, arg, -ECHILD };
	uint64_t all = MT_REAL_SIGSET_ALL, old;
	long stack, got;
	int saved = errno, st;
	pid_t pid;

	if (alone) {
		/* No handler of the program may run while a descriptor of
		 * ours is in its table. */
		sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
		r.result = fn(arg);
		sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
		errno = saved;
		return r.result;
	}
	stack = mt_child_stack_map(STACK_LEN);
	if (stack < 0 && stack > -4096)
		return stack;
	/* No handler of the program may run in a child sharing its memory. */
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
	/* No exit signal: the child is no one's business but ours. */
	pid = clone(child, (char *)stack + STACK_LEN, CLONE_VM | CLONE_VFORK, &r);
	if (pid < 0) {
		r.result = -errno;
		if (errno == EPERM || errno == ENOSYS)
			atomic_store(&mt_nofd_refused, errno);
	} else {
		do
			got = sys(SYS_wait4, pid, (long)&st, __WALL, 0, 0, 0);
		while (got == -EINTR);
	}
	sys(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	mt_child_stack_unmap(stack, STACK_LEN);
	errno = saved;
	return r.result;
}

static long open_ro(const char *path)
{
	long fd;

	do
		fd = sys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	while (fd == -EINTR);
	return fd;
}

typedef struct {
	const char *path;
	const void *addr;
	size_t size;
} map_t;

long mt_nofd_map_here(const char *path, const void **out, size_t *size)
{
	struct stat st;
	long fd = open_ro(path), rc, addr;

	if (fd < 0)
		return fd;
	rc = sys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
	if (rc == 0 && (!S_ISREG(st.st_mode) || st.st_size <= 0))
		rc = -EINVAL;
	if (rc == 0) {
		addr = sys(SYS_mmap, 0, (long)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (addr < 0 && addr > -4096) {
			rc = addr;
		} else {
			*out = (const void *)addr;
			*size = (size_t)st.st_size;
		}
	}
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	return rc;
}

static long map_child(void *p)
{
	map_t *m = p;

	return mt_nofd_map_here(m->path, &m->addr, &m->size);
}

long mt_nofd_map(const char *path, const void **addr, size_t *size)
{
	map_t m = { path, NULL, 0 };
	long rc = mt_nofd_run(map_child, &m);

	if (rc == 0) {
		*addr = m.addr;
		*size = m.size;
	}
	return rc;
}

typedef struct {
	const char *path;
	char *buf;
	size_t cap;
	size_t (*fn)(void *, char *, size_t);
	void *arg;
} read_t;

static long read_child(void *p)
{
	read_t *r = p;
	size_t have = 0;
	long fd = open_ro(r->path), n = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		n = sys(SYS_read, fd, (long)(r->buf + have), (long)(r->cap - have), 0, 0, 0);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		if (r->fn) {
			size_t used = r->fn(r->arg, r->buf, have);

			memmove(r->buf, r->buf + used, have - used);
			have -= used;
			if (have == r->cap)
				have = 0;
		} else if (have == r->cap) {
			break;
		}
	}
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n < 0)
		return n;
	return r->fn ? 0 : (long)have;
}

long mt_nofd_read(const char *path, char *buf, size_t cap)
{
	read_t r = { path, buf, cap, NULL, NULL };

	return mt_nofd_run(read_child, &r);
}

long mt_nofd_read_each(const char *path, char *buf, size_t cap,
		       size_t (*fn)(void *arg, char *buf, size_t have), void *arg)
{
	read_t r = { path, buf, cap, fn, arg };

	return mt_nofd_run(read_child, &r);
}
