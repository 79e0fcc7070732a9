/*
 * memtrace.h: tell memtrace about a program's own allocators (pools,
 * arenas, free lists), so that their blocks are traced like malloc's.
 *
 *   static memtrace_allocator_t pool_mt;
 *
 *   pool_mt = memtrace_allocator("pool");       once, by name
 *   p = pool_take(pool, n);
 *   memtrace_alloc(pool_mt, p, n);              after a block is handed out
 *   memtrace_free(pool_mt, p);                  before it can be reused
 *   pool_put(pool, p);
 *   memtrace_realloc(pool_mt, p, q, m);         p grown or moved to q
 *
 * Header-only: build with -I (this directory) and link nothing.  Under
 * LD_PRELOAD=libmtpreload.so the calls are recorded in the trace: each
 * allocator is declared once ("allocator" event, an id from 1 and its
 * name) and its blocks' events carry that id and "fn":"api"; `memtrace
 * summary` lists it in by_allocator, and `memtrace report --allocator
 * NAME` and `memtrace gate --allocator NAME` look at it alone.  Without
 * the preload, memtrace_allocator() gives a handle that records nothing,
 * and every other call costs one branch on it.
 *
 * How the calls reach the preload: the first call of each function looks
 * up the preload's memtrace_api_* function with dlsym(RTLD_DEFAULT, ...)
 * and keeps it in a static pointer of the translation unit (atomic loads
 * and stores, so any thread may be first).  dlsym is in libc from glibc
 * 2.34 on; the reference to it here is weak, so on an older glibc a
 * program built without -ldl still links and runs, untraced (link with
 * -ldl there to trace it).
 *
 * The rules of the calls, as for malloc and free: report a block after
 * the allocator has it to hand out and before the program uses it, its
 * free (or the realloc that moves it) before the allocator can hand the
 * old address out again (another thread's alloc of it must come later in
 * the trace), and each block of one allocator once (blocks of different
 * allocators may overlap: a pool's blocks lie inside the malloc'd arena
 * it carves them from).  A NULL
 * pointer is never recorded; memtrace_realloc() with old_ptr NULL is an
 * alloc, with new_ptr NULL and size 0 a free, with new_ptr NULL and size
 * > 0 (the resize failed) nothing.  The same name always gives the same
 * allocator, at most 256 names per process, names cut to 255 bytes.
 * Calls made while memtrace itself is running on the thread (a signal
 * handler that interrupts it) are not recorded.
 *
 * C99 or later, or C++; GCC or Clang (atomic builtins, weak references).
 */
#ifndef MEMTRACE_H
#define MEMTRACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An allocator's handle: id 0 records nothing (no preload, or tracing
 * off). */
typedef struct memtrace_allocator_s {
	unsigned int id;
} memtrace_allocator_t;

/* The preload's entry points (preload/mt_api_hooks.c). */
typedef unsigned int (*memtrace_api_allocator_fn_)(const char *name);
typedef void (*memtrace_api_alloc_fn_)(unsigned int id, const void *ptr,
				       size_t size);
typedef void (*memtrace_api_free_fn_)(unsigned int id, const void *ptr);
typedef void (*memtrace_api_realloc_fn_)(unsigned int id, const void *old_ptr,
					 const void *new_ptr, size_t size);

/* libc's dlsym, weak: NULL on a glibc before 2.34 linked without -ldl.
 * RTLD_DEFAULT is 0 in glibc and musl; <dlfcn.h> would need _GNU_SOURCE
 * defined before the program's first include to say so. */
extern void *memtrace_dlsym_(void *handle, const char *name)
	__asm__("dlsym") __attribute__((weak));

/* This translation unit's entry points, as dlsym gives them: NULL until
 * looked up (and when the preload is not there). */
static void *memtrace_api_[4];
enum { MEMTRACE_API_ALLOCATOR_, MEMTRACE_API_ALLOC_, MEMTRACE_API_FREE_,
       MEMTRACE_API_REALLOC_ };

static inline void *memtrace_api_get_(int i)
{
	static const char *const names[4] = {
		"memtrace_api_allocator", "memtrace_api_alloc",
		"memtrace_api_free", "memtrace_api_realloc",
	};
	void *fn = __atomic_load_n(&memtrace_api_[i], __ATOMIC_ACQUIRE);

	if (!fn && memtrace_dlsym_) {
		fn = memtrace_dlsym_((void *)0, names[i]);
		__atomic_store_n(&memtrace_api_[i], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* The allocator called name (a NUL-terminated string, copied): the same
 * handle for the same name.  Looks for the preload on every call until
 * it is found, so call it once per allocator, not per block. */
static inline memtrace_allocator_t memtrace_allocator(const char *name)
{
	memtrace_allocator_t a = { 0 };
	memtrace_api_allocator_fn_ fn;
	void *p = memtrace_api_get_(MEMTRACE_API_ALLOCATOR_);

	/* An object pointer to a function pointer, which ISO C leaves to
	 * POSIX: copied, not cast, so that -pedantic has nothing to say. */
	__builtin_memcpy(&fn, &p, sizeof(fn));
	if (fn)
		a.id = fn(name);
	return a;
}

/* Each: one branch on a handle of id 0.  A handle not 0 came from the
 * preload, so its entry points are there (looked up here when another
 * translation unit's memtrace_allocator() gave it). */
static inline void memtrace_alloc(memtrace_allocator_t a, const void *ptr,
				  size_t size)
{
	if (a.id) {
		memtrace_api_alloc_fn_ fn;
		void *p = memtrace_api_get_(MEMTRACE_API_ALLOC_);

		__builtin_memcpy(&fn, &p, sizeof(fn));
		if (fn)
			fn(a.id, ptr, size);
	}
}

static inline void memtrace_free(memtrace_allocator_t a, const void *ptr)
{
	if (a.id) {
		memtrace_api_free_fn_ fn;
		void *p = memtrace_api_get_(MEMTRACE_API_FREE_);

		__builtin_memcpy(&fn, &p, sizeof(fn));
		if (fn)
			fn(a.id, ptr);
	}
}

static inline void memtrace_realloc(memtrace_allocator_t a, const void *old_ptr,
				    const void *new_ptr, size_t size)
{
	if (a.id) {
		memtrace_api_realloc_fn_ fn;
		void *p = memtrace_api_get_(MEMTRACE_API_REALLOC_);

		__builtin_memcpy(&fn, &p, sizeof(fn));
		if (fn)
			fn(a.id, old_ptr, new_ptr, size);
	}
}

#ifdef __cplusplus
}
#endif

#endif
