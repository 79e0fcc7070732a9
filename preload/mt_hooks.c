/*
 * mt_hooks: the libc overrides of libmtpreload.so, and nothing else.
 *
 * Each hook calls the real function (mt_real) and hands what happened to
 * the core (mt_trace).  These and memtrace.h's entry points
 * (mt_api_hooks.c) are the only symbols the library exports.
 * A hook must never record when its thread is already inside the tracer
 * (mt_trace_enter), must work before the real functions are known (the
 * bootstrap arena), and must never change what the program sees: same
 * result, same errno -- but for the one call MEMTRACE_FAIL_AT makes fail
 * (mt_trace_fail_now), which returns NULL with errno ENOMEM.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mt_clock.h"
#include "mt_real.h"
#include "mt_signal.h"
#include "mt_trace.h"

#define EXPORT __attribute__((visibility("default")))

/* Multiply without overflow, as calloc and reallocarray must. */
static int mul_overflows(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

/*
 * malloc, calloc and free are each a hook with no frame of its own, which
 * passes what it need not record straight to libc (sampling's fast paths)
 * and tail-calls its traced half.  The traced half's frame holds the
 * stack capture's buffer (2 KiB) and its registers, which the hook would
 * otherwise set up on every call; tail-called, it is where the unwinder
 * starts, one frame from the program's, as when the capture was the
 * hook's.
 */
#define TRACED static __attribute__((noinline))

TRACED void *malloc_traced(size_t size)
{
	void *p;

	if (!mt_trace_enter())
		return __builtin_expect(mt_real_owned != 0, 0) ? mt_real_owned_alloc(1, size) :
								  mt_real.malloc(size);
	if (mt_trace_fail_now(MT_FN_MALLOC, size, 0)) {
		mt_trace_leave();
		return NULL;
	}
	p = mt_real.malloc(size);
	mt_trace_allocated(MT_FN_MALLOC, p, size, 0);
	mt_trace_leave();
	return p;
}

EXPORT void *malloc(size_t size)
{
	if (mt_real_resolve() < 0)
		return mt_real_arena_alloc(size, 16);
	if (mt_trace_sample_passes(size))
		return mt_real.malloc(size);
	return malloc_traced(size);
}

TRACED void *calloc_traced(size_t n, size_t size, size_t total)
{
	void *p;

	if (!mt_trace_enter())
		return __builtin_expect(mt_real_owned != 0, 0) ? mt_real_owned_alloc(n, size) :
								  mt_real.calloc(n, size);
	if (mt_trace_fail_now(MT_FN_CALLOC, total, 0)) {
		mt_trace_leave();
		return NULL;
	}
	p = mt_real.calloc(n, size);
	mt_trace_allocated(MT_FN_CALLOC, p, total, 0);
	mt_trace_leave();
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;

	if (mt_real_resolve() < 0) {
		if (mul_overflows(n, size, &total))
			return NULL;
		return mt_real_arena_alloc(total, 16);
	}
	if (mul_overflows(n, size, &total))
		total = SIZE_MAX;
	if (mt_trace_sample_passes(total))
		return mt_real.calloc(n, size);
	return calloc_traced(n, size, total);
}

TRACED void free_traced(void *p)
{
	if (!mt_trace_enter()) {
		mt_real.free(p);
		return;
	}
	/* Record first: once freed, another thread may get the address. */
	mt_trace_free(MT_FN_FREE, p);
	mt_real.free(p);
	mt_trace_leave();
}

EXPORT void free(void *p)
{
	if (!p)
		return;
	if (mt_real_in_arena(p)) {
		mt_real_arena_free(p);
		return;
	}
	if (mt_real_resolve() < 0)
		return;
	if (mt_trace_sample_passes_free(p)) {
		mt_real.free(p);
		return;
	}
	free_traced(p);
}

EXPORT void *realloc(void *p, size_t size)
{
	void *q;

	if (mt_real_in_arena(p)) {
		/* Move an arena block into real memory. */
		size_t had = mt_real_arena_size(p);

		q = malloc(size);
		if (q && size)
			__builtin_memcpy(q, p, size < had ? size : had);
		if (q || !size)
			mt_real_arena_free(p);
		return q;
	}
	if (mt_real_resolve() < 0)
		return p ? NULL : mt_real_arena_alloc(size, 16);
	if (!mt_trace_enter())
		return mt_real.realloc(p, size);
	/* realloc(p, 0) frees: no allocation to fail. */
	if ((size || !p) && mt_trace_fail_now(MT_FN_REALLOC, size, 0))
		q = NULL;
	else
		q = mt_trace_reallocated(MT_FN_REALLOC, p, size, mt_real.realloc);
	mt_trace_leave();
	return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;
	void *q;

	if (mt_real_resolve() < 0 || mt_real_in_arena(p) || !mt_real.reallocarray) {
		if (mul_overflows(n, size, &total)) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc(p, total);
	}
	if (!mt_trace_enter())
		return mt_real.reallocarray(p, n, size);
	if (mul_overflows(n, size, &total)) {
		q = mt_real.reallocarray(p, n, size); /* fails with ENOMEM */
		mt_trace_allocated(MT_FN_REALLOCARRAY, NULL, SIZE_MAX, 0);
	} else if ((total || !p) &&
		   mt_trace_fail_now(MT_FN_REALLOCARRAY, total, 0)) {
		q = NULL;
	} else {
		q = mt_trace_reallocated(MT_FN_REALLOCARRAY, p, total, mt_real.realloc);
	}
	mt_trace_leave();
	return q;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int rc;

	if (mt_real_resolve() < 0) {
		*out = mt_real_arena_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	if (!mt_trace_enter())
		return mt_real.posix_memalign(out, align, size);
	if (mt_trace_fail_now(MT_FN_POSIX_MEMALIGN, size, align)) {
		mt_trace_leave();
		return ENOMEM;
	}
	rc = mt_real.posix_memalign(out, align, size);
	mt_trace_allocated(MT_FN_POSIX_MEMALIGN, rc == 0 ? *out : NULL, size, align);
	mt_trace_leave();
	return rc;
}

/* aligned_alloc, memalign, valloc and pvalloc share one shape. */
#define ALIGNED_HOOK(name, FN, params, args, size_expr, align_expr)          \
	EXPORT void *name params                                             \
	{                                                                    \
		void *p;                                                     \
		if (mt_real_resolve() < 0)                                   \
			return mt_real_arena_alloc(size_expr, align_expr);   \
		if (!mt_trace_enter())                                       \
			return mt_real.name args;                            \
		if (mt_trace_fail_now(FN, size_expr, align_expr)) {          \
			mt_trace_leave();                                    \
			return NULL;                                         \
		}                                                            \
		p = mt_real.name args;                                       \
		mt_trace_allocated(FN, p, size_expr, align_expr);            \
		mt_trace_leave();                                            \
		return p;                                                    \
	}

ALIGNED_HOOK(aligned_alloc, MT_FN_ALIGNED_ALLOC, (size_t align, size_t size),
	     (align, size), size, align)
ALIGNED_HOOK(memalign, MT_FN_MEMALIGN, (size_t align, size_t size),
	     (align, size), size, align)
ALIGNED_HOOK(valloc, MT_FN_VALLOC, (size_t size), (size), size, 4096)
ALIGNED_HOOK(pvalloc, MT_FN_PVALLOC, (size_t size), (size), size, 4096)

EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (mt_real_in_arena(p))
		return mt_real_arena_size(p);
	if (mt_real_resolve() < 0 || !mt_real.malloc_usable_size)
		return 0;
	return mt_real.malloc_usable_size(p);
}

/*
 * RTLD_DEEPBIND makes a library bind to its own dependencies first and so
 * bypass interposition (heaptrack strips it too).  The real call must
 * stay a tail call: glibc's dlopen takes the caller's return address to
 * find the calling object's RUNPATH and namespace, and a tail call leaves
 * the program's own return address in place.  libunwind is opened before
 * it (mt_trace_dlopening).
 */
EXPORT void *dlopen(const char *file, int mode)
{
	if (mt_real_resolve() < 0 || !mt_real.dlopen)
		return NULL;
	mt_trace_dlopening();
	return mt_real.dlopen(file, mode & ~RTLD_DEEPBIND);
}

/*
 * The unloaded module's addresses may be given to another, whose code
 * has other unwind rules and other names: the fast unwinder forgets what
 * it read, and the frames and stacks are declared again
 * (mt_trace_dlclosed).  Told after the real call, so that no walk or
 * frame from then on keeps anything of the module.  This records nothing
 * and calls no malloc, so it needs no recursion guard: inside the tracer
 * or not, it is told the same (the tracer never calls dlclose, so never
 * with the table lock held).
 */
EXPORT int dlclose(void *handle)
{
	int rc;

	if (mt_real_resolve() < 0 || !mt_real.dlclose)
		return -1;
	rc = mt_real.dlclose(handle);
	mt_trace_dlclosed();
	return rc;
}

/*
 * _Fork() (glibc 2.34, POSIX.1-2024) is fork() without the fork handlers,
 * the one that is async-signal-safe.  Its child would go on writing into
 * the parent's trace through the inherited shared mapping, its lines
 * mixed with the parent's (a parent's trace came out with seq gaps and
 * the child's blocks), and no handler of ours runs to stop it.  So the
 * child stops tracing at once, before it returns to the program; it is
 * not traced until it execs, like vfork's.  glibc's fork() calls its own
 * _Fork inside libc, never this one.
 */
EXPORT pid_t _Fork(void)
{
	pid_t pid;

	if (mt_real_resolve() < 0 || !mt_real.fork_without_handlers) {
		errno = ENOSYS;
		return -1;
	}
	pid = mt_real.fork_without_handlers();
	if (pid == 0)
		mt_trace_fork_untraced_child();
	return pid;
}

/* A system call made without libc, for the hooks' use before the real
 * functions are known, with libc's answer: -1 and errno on failure. */
static long raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	long r = mt_real_syscall6(n, a, b, c, d, e, f);

	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * prctl(PR_SET_TSC) changes whether the calling thread may execute RDTSC,
 * which the clock (the vDSO's and the tracer's own) must know before its
 * next reading in that thread.  The same call made through syscall(2) is
 * seen too; only a system call made without libc goes unseen.
 */
EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int rc;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		mt_trace_program_locks_down();
	if (option == PR_SET_MM)
		mt_trace_mm_changed();
	if (mt_real_resolve() == 0 && mt_real.prctl) {
		rc = mt_real.prctl(option, a[0], a[1], a[2], a[3]);
	} else {
		rc = (int)raw_syscall(SYS_prctl, option, (long)a[0], (long)a[1],
				      (long)a[2], (long)a[3], 0);
	}
	if (option == PR_SET_TSC)
		mt_clock_thread_tsc_changed();
	return rc;
}

/* syscall(2) passes on six arguments whatever the call takes, as glibc's
 * own does. */
EXPORT long syscall(long number, ...)
{
	long a[6];
	va_list ap;
	long rc;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_seccomp || (number == SYS_prctl && a[0] == PR_SET_SECCOMP))
		mt_trace_program_locks_down();
	if (number == SYS_prctl && a[0] == PR_SET_MM)
		mt_trace_mm_changed();
	if (mt_real_resolve() == 0 && mt_real.syscall) {
		rc = mt_real.syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	} else {
		rc = raw_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	if (number == SYS_prctl && a[0] == PR_SET_TSC)
		mt_clock_thread_tsc_changed();
	return rc;
}

/*
 * What the program learns of the signals whose handler mt_signal hides:
 * the action it had (the default), until it sets one of its own.
 */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (mt_real_resolve() < 0 || !mt_real.sigaction) {
		errno = ENOSYS;
		return -1;
	}
	return mt_signal_action(sig, act, old, mt_real.sigaction);
}

EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	if (mt_real_resolve() < 0 || !mt_real.sigaction || !mt_real.signal) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return mt_signal_set(sig, handler, mt_real.sigaction, mt_real.signal);
}

/*
 * The ends of a process that run no destructor: _exit and _Exit (one
 * function in glibc, two names) record trace.stop and wait for the
 * collector to finish the trace, unless
 * the caller is a vfork child, whose memory, and so trace, is its
 * parent's (mt_trace_end() asks).
 */
static __attribute__((noreturn)) void exit_now(int status)
{
	mt_trace_end("exit");
	if (mt_real_resolve() == 0 && mt_real.exit_now)
		mt_real.exit_now(status);
	for (;;)
		mt_real_syscall6(SYS_exit_group, status, 0, 0, 0, 0, 0);
}

EXPORT void _exit(int status)
{
	exit_now(status);
}

EXPORT void _Exit(int status)
{
	exit_now(status);
}

/*
 * The exec family: the image about to be replaced records trace.stop with
 * reason "exec", in the file before the exec; when the exec fails and returns, the
 * trace goes on as if nothing happened (mt_trace_exec_begin()).  glibc's
 * execl* and execv* call its execve and execvpe inside libc, where no
 * hook sees them, so each is hooked here and made one of those.
 */
#define EXEC_CALL(call)                                  \
	do {                                             \
		int began_, rc_;                         \
		if (mt_real_resolve() < 0) {             \
			errno = ENOSYS;                  \
			return -1;                       \
		}                                        \
		began_ = mt_trace_exec_begin();          \
		rc_ = (call);                            \
		if (began_)                              \
			mt_trace_exec_failed();          \
		return rc_;                              \
	} while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_CALL(mt_real.execve(path, argv, envp));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_CALL(mt_real.execvpe(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	EXEC_CALL(mt_real.fexecve(fd, argv, envp));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		    char *const envp[], int flags)
{
	EXEC_CALL(mt_real.execveat(dirfd, path, argv, envp, flags));
}

EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_CALL(mt_real.execve(path, argv, environ));
}

EXPORT int execvp(const char *file, char *const argv[])
{
	EXEC_CALL(mt_real.execvpe(file, argv, environ));
}

/* execl, execlp and execle: their arguments, counted to the NULL and
 * copied into an array on the caller's stack, as glibc does. */
static size_t execl_count(va_list ap)
{
	size_t n = 1;

	while (va_arg(ap, const char *))
		n++;
	return n;
}

/* arg and the n - 1 arguments after it, then NULL, into argv[0..n];
 * ap is left past the NULL (where execle's envp is). */
static void execl_fill(const char *arg, va_list ap, char **argv, size_t n)
{
	argv[0] = (char *)arg;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = va_arg(ap, char *);
}

#define EXECL_HOOK(name, target, first, has_envp)                        \
	EXPORT int name(const char *first, const char *arg, ...)         \
	{                                                                \
		char **envp = environ;                                   \
		size_t n;                                                \
		va_list ap;                                              \
		va_start(ap, arg);                                       \
		n = execl_count(ap);                                     \
		va_end(ap);                                              \
		char *argv[n + 1];                                       \
		va_start(ap, arg);                                       \
		execl_fill(arg, ap, argv, n);                            \
		if (has_envp)                                            \
			envp = va_arg(ap, char **);                      \
		va_end(ap);                                              \
		EXEC_CALL(mt_real.target(first, argv, envp));            \
	}

EXECL_HOOK(execl, execve, path, 0)
EXECL_HOOK(execlp, execvpe, file, 0)
EXECL_HOOK(execle, execve, path, 1)

/* glibc calls the constructors of a shared object with main()'s argc,
 * argv and envp: the environment a shell copies for its children is that
 * envp (mt_trace_publish_env). */
__attribute__((constructor)) static void mt_hooks_start(int argc, char **argv,
							char **envp)
{
	mt_trace_mark_start();
	if (mt_real_resolve() < 0 || !mt_trace_guard())
		return;
	mt_trace_set_argv(argc, argv);
	mt_trace_init();
	mt_trace_publish_env(envp);
	mt_trace_leave();
}

/* Destructors run after every atexit handler, and this library's after
 * those of the objects loaded after it, so frees made at exit are still
 * recorded before the stop; then libstdc++'s runtime memory is freed
 * (mt_trace_freeres), last, as Valgrind does. */
__attribute__((destructor)) static void mt_hooks_stop(void)
{
	mt_trace_freeres();
	mt_trace_end("exit");
}
