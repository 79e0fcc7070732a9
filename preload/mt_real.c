/*
 * mt_real: dlsym bootstrap.  glibc's dlsym may call calloc (for its error
 * buffer) before the real calloc is known; those few requests come from a
 * static arena here, as heaptrack and libleak do.  It must never call a
 * hook's own tracing path, nor free arena memory.
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
 * preloaded libraries that allocate from their constructors first. */
static _Alignas(64) unsigned char arena[64 << 10] MT_LAYOUT_COLD;
MT_PREFAULT_COLD(arena);
static atomic_size_t arena_used;

/* 0: never tried, 1: in progress, 2: done. */
atomic_int mt_real_state;
static __thread int resolving __attribute__((tls_model("initial-exec")));

void *mt_real_arena_alloc(size_t size, size_t align)
{
	size_t old = atomic_load(&arena_used), start;

	if (align < 16)
		align = 16;
	do {
		start = (old + align - 1) & ~(align - 1);
		if (start > sizeof(arena) || size > sizeof(arena) - start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&arena_used, &old, start + size));
	/* The arena is static, hence zero, and never reused: calloc is met. */
	return arena + start;
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

size_t mt_real_arena_left(const void *p)
{
	return (size_t)(arena + sizeof(arena) - (const unsigned char *)p);
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
