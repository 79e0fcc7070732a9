/*
 * mt_real: dlsym bootstrap.  glibc's dlsym may call calloc (for its error
 * buffer) before the real calloc is known; those few requests come from a
 * static arena here, as heaptrack and libleak do.  It must never call a
 * hook's own tracing path, nor give arena memory to the real free.
 */
#include "mt_real.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "mt_layout.h"
#include "mt_prefault.h"

mt_real_t mt_real;

/* 64 KiB: dlsym needs a few hundred bytes; the rest is margin for other
 * preloaded libraries that allocate from their constructors first, and
 * for what the tracer's own calls allocate (mt_real_owned). */
static _Alignas(64) unsigned char arena[64 << 10] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(arena);
static atomic_size_t arena_used;

/*
 * Each block follows a header of 16 bytes (so the block stays aligned to
 * 16): its capacity, and its class.  A block of class c holds 16 << c
 * bytes; one made to an alignment over 16 or larger than the largest
 * class has none and is never reused.  A freed block goes on its class's
 * list and is given out again, zeroed: the thread-local blocks glibc
 * gives every thread that calls into the dlopen'ed libunwind come and go
 * with the threads, and an arena that kept them all would run out after
 * some thousands of threads, whose later blocks, the real malloc's, the
 * trace would show freed and never allocated.
 *
 * The lists are taken with a try-lock and never waited for: an
 * allocation in a signal handler that came while its thread held the
 * lock, or in a forked child whose parent's other thread held it, takes
 * new arena memory, and a free that finds the lock taken leaves its block
 * unused.
 */
typedef struct {
	size_t cap, cls;
} header_t;

#define HEADER sizeof(header_t)
#define CLASSES 9 /* 16 bytes to 4 KiB */
#define CLASS_NONE ((size_t)-1)

typedef struct freed {
	struct freed *next;
} freed_t;

/* Each class's freed blocks, and their try-lock. */
static freed_t *freed[CLASSES];
static atomic_flag freed_lock = ATOMIC_FLAG_INIT;

static size_t class_of(size_t size)
{
	size_t c = 0;

	while ((size_t)16 << c < size)
		c++;
	return c;
}

/* A block of class c from its list, zeroed, or NULL. */
static void *reuse(size_t c)
{
	freed_t *b = NULL;

	if (atomic_flag_test_and_set_explicit(&freed_lock, memory_order_acquire))
		return NULL;
	b = freed[c];
	if (b)
		freed[c] = b->next;
	atomic_flag_clear_explicit(&freed_lock, memory_order_release);
	if (b)
		memset(b, 0, (size_t)16 << c);
	return b;
}

static header_t *header_of(const void *p)
{
	return (header_t *)((uintptr_t)p - HEADER);
}

/* 0: never tried, 1: in progress, 2: done. */
atomic_int mt_real_state;
static __thread int resolving __attribute__((tls_model("initial-exec")));

void *mt_real_arena_alloc(size_t size, size_t align)
{
	size_t old = atomic_load(&arena_used), start, cls = CLASS_NONE, cap = size;
	void *p;

	if (align < 16)
		align = 16;
	if (align == 16 && size <= (size_t)16 << (CLASSES - 1)) {
		cls = class_of(size);
		cap = (size_t)16 << cls;
		p = reuse(cls);
		if (p)
			return p;
	}
	do {
		start = (old + HEADER + align - 1) & ~(align - 1);
		if (start > sizeof(arena) || cap > sizeof(arena) - start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&arena_used, &old, start + cap));
	/* Never given out before, so still zero: calloc is met. */
	p = arena + start;
	header_of(p)->cap = cap;
	header_of(p)->cls = cls;
	return p;
}

void mt_real_arena_free(void *p)
{
	header_t *h = header_of(p);
	freed_t *b = p;

	if (h->cls >= CLASSES)
		return;
	if (atomic_flag_test_and_set_explicit(&freed_lock, memory_order_acquire))
		return;
	b->next = freed[h->cls];
	freed[h->cls] = b;
	atomic_flag_clear_explicit(&freed_lock, memory_order_release);
}

size_t mt_real_arena_size(const void *p)
{
	return header_of(p)->cap;
}

__thread int mt_real_owned __attribute__((tls_model("initial-exec")));

void *mt_real_owned_alloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	p = mt_real_arena_alloc(total, 16);
	if (p)
		return p;
	return n == 1 ? mt_real.malloc(size) : mt_real.calloc(n, size);
}

int mt_real_in_arena(const void *p)
{
	return (const unsigned char *)p >= arena &&
	       (const unsigned char *)p < arena + sizeof(arena);
}

long mt_real_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#else
	/* Not written for other machines: the hooks' fallbacks fail there. */
	(void)n, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
	return -ENOSYS;
#endif
}

void mt_real_dlerror_clear(void)
{
	/* The first call delivers the message, the second frees it. */
	if (dlerror())
		(void)dlerror();
}

#define LOOKUP(name) \
	(*(void **)&mt_real.name = dlsym(RTLD_NEXT, #name))

int mt_real_resolve_slow(void)
{
	int expected = 0;

	if (atomic_load_explicit(&mt_real_state, memory_order_acquire) == 2)
		return 0;
	if (resolving)
		return -1;
	if (!atomic_compare_exchange_strong(&mt_real_state, &expected, 1)) {
		/* Another thread resolves: wait for it.  Its dlsym cannot
		 * need us, as its own allocations come from the arena. */
		while (atomic_load_explicit(&mt_real_state, memory_order_acquire) != 2)
			;
		return 0;
	}
	resolving = 1;
	LOOKUP(malloc);
	LOOKUP(calloc);
	LOOKUP(realloc);
	LOOKUP(reallocarray);
	LOOKUP(free);
	LOOKUP(posix_memalign);
	LOOKUP(aligned_alloc);
	LOOKUP(memalign);
	LOOKUP(valloc);
	LOOKUP(pvalloc);
	LOOKUP(malloc_usable_size);
	LOOKUP(dlopen);
	LOOKUP(dlclose);
	*(void **)&mt_real.fork_without_handlers = dlsym(RTLD_NEXT, "_Fork");
	*(void **)&mt_real.exit_now = dlsym(RTLD_NEXT, "_exit");
	LOOKUP(execve);
	LOOKUP(execvpe);
	LOOKUP(fexecve);
	LOOKUP(execveat);
	LOOKUP(prctl);
	LOOKUP(syscall);
	LOOKUP(sigaction);
	LOOKUP(signal);
	mt_real_dlerror_clear();
	resolving = 0;
	atomic_store_explicit(&mt_real_state, 2, memory_order_release);
	return 0;
}
