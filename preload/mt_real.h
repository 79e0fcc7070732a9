/*
 * mt_real: the real allocation functions behind the hooks, found with
 * dlsym(RTLD_NEXT, ...), and the static bootstrap arena that serves the
 * allocations dlsym itself makes before they are known.
 *
 * Invariants: mt_real_resolve() is idempotent and safe to call from any
 * hook at any time, including before constructors run; until it returns,
 * allocation requests are served from the arena (never traced, never
 * passed to the real free); mt_real_in_arena() tells such a pointer apart.
 */
#ifndef MT_REAL_H
#define MT_REAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

typedef struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	void *(*dlopen)(const char *, int);
	int (*dlclose)(void *);
	/* glibc's _Fork (2.34 and later), or NULL. */
	pid_t (*fork_without_handlers)(void);
	/* What ends or replaces the image, and what changes whether a
	 * thread may read the TSC. */
	void (*exit_now)(int); /* _exit */
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*prctl)(int, unsigned long, unsigned long, unsigned long,
		     unsigned long);
	long (*syscall)(long, long, long, long, long, long, long);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	__sighandler_t (*signal)(int, __sighandler_t);
} mt_real_t;

extern mt_real_t mt_real;

/* Find the real functions (once).  Returns 0 when they are known, -1 while
 * a resolution is in progress on this thread (dlsym is allocating).
 * Inline: every hook asks first, and after the first call the answer is
 * one load (mt_real_state 2). */
extern atomic_int mt_real_state;
int mt_real_resolve_slow(void);
static inline int mt_real_resolve(void)
{
	if (__builtin_expect(atomic_load_explicit(&mt_real_state, memory_order_acquire) == 2, 1))
		return 0;
	return mt_real_resolve_slow();
}

/*
 * A dlsym of the preload's own that finds nothing leaves its message for
 * the program's next dlerror(), in two blocks the program's next dl call
 * frees.  Called after such lookups, inside the tracer: it takes the
 * message and then clears it, as two dlerror() calls do, so that the
 * program sees what it would see bare and its trace no free of a block
 * it never saw allocated.
 */
void mt_real_dlerror_clear(void);

/* A system call made directly, for a hook that must work before the real
 * functions are known (syscall(2) itself is one of the hooks).  Returns
 * the kernel's answer: -errno on failure, errno untouched. */
long mt_real_syscall6(long n, long a, long b, long c, long d, long e, long f);

/* Every signal but the two glibc keeps for its threads (sigfillset()'s
 * set), as rt_sigprocmask(2) takes it with a size of 8.  Made here, not
 * by sigfillset(): a forked child that runs none of libc's code near it
 * (a fault maps 64 KiB of code) would fault it in for this alone. */
#define MT_REAL_SIGSET_ALL (~((1ull << (32 - 1)) | (1ull << (33 - 1))))

/*
 * What the tracer's own calls into other code allocate: dlopen's blocks,
 * and libunwind's thread-local block, which glibc allocates with malloc
 * at a thread's first use and frees when the thread ends, from whichever
 * thread reuses or frees its stack.  Such a free, recorded, would be a
 * free of a block the trace never saw allocated.  So while the calling
 * thread's count is above 0 (inside the hooks' recursion guard) the
 * hooks serve malloc and calloc from the arena, whose blocks every hook
 * tells apart; from the real functions when it is full.
 */
extern __thread int mt_real_owned __attribute__((tls_model("initial-exec")));
/* calloc(n, size) from the arena, else the real calloc (n 1: malloc). */
void *mt_real_owned_alloc(size_t n, size_t size);

/* An allocation from the bootstrap arena, aligned to align (a power of
 * two), zero-filled; NULL when the arena is exhausted.  A block freed
 * with mt_real_arena_free() may be given out again. */
void *mt_real_arena_alloc(size_t size, size_t align);
int mt_real_in_arena(const void *p);
/* Give back a block mt_real_arena_alloc() returned (a block made to an
 * alignment over 16, or over 4 KiB, stays where it is). */
void mt_real_arena_free(void *p);
/* The bytes p's block holds, at least what was asked for. */
size_t mt_real_arena_size(const void *p);

#endif
