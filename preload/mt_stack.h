/*
 * mt_stack: call stacks for the trace: capture with libunwind, and the
 * tables that give each unique instruction address a frame id and each
 * unique stack a stack id, so each is written to the trace once.
 *
 * mt_stack_capture() takes no lock and may take the loader's (libunwind
 * reads unwind tables through dl_iterate_phdr): call it before taking the
 * table lock (mt_trace.c), never while holding it.  Everything else but the
 * thread's cache must be called with the table lock held, and never calls
 * into the loader.  Nothing here calls malloc.
 */
#ifndef MT_STACK_H
#define MT_STACK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mt_real.h"
#include "mt_unwind_lib.h"

#define MT_STACK_MAX_DEPTH 256

/* Tell the capture which addresses are the tracer's own, to leave out. */
void mt_stack_init(uint64_t self_start, uint64_t self_end);

/*
 * Room for a capture: depth frames, and the tracer's own before them
 * (one buffer: a hook's frame holds it through the whole event, and
 * threads may have small stacks).  The unwinder fills p; the frames kept
 * are mt_stack_ips(), from the first after the tracer's own, read where
 * the unwinder wrote them: moving them to the front was a copy an event.
 */
#define MT_STACK_CAPTURE_MAX (MT_STACK_MAX_DEPTH + 16)
typedef struct {
	union {
		void *p[MT_STACK_CAPTURE_MAX];
		uint64_t ip[MT_STACK_CAPTURE_MAX];
	};
	int first; /* the first frame kept */
} mt_stack_buf_t;

/* The frames a capture of st kept. */
static inline const uint64_t *mt_stack_ips(const mt_stack_buf_t *st)
{
	return st->ip + st->first;
}

/*
 * The unwinder (MEMTRACE_UNWIND): libunwind's unw_backtrace; the fast
 * walker (mt_unwind_cache.h), which leaves to libunwind the stacks it
 * cannot walk as libunwind would; or both on every event, compared.  On
 * the first difference verify says so in one line, gives libunwind's
 * stack, calls on_stop (which ends the trace) and unwinds with
 * libunwind alone from then on.  on_stop is called too when libunwind
 * is needed and cannot be opened (mt_unwind_lib_init).  Set once, at
 * start.
 */
enum { MT_UNWIND_LIBUNWIND, MT_UNWIND_FAST, MT_UNWIND_VERIFY };
#define MT_UNWIND_DEFAULT MT_UNWIND_FAST
extern _Atomic int mt_stack_unwinder;
void mt_stack_set_unwinder(int unwinder, void (*on_stop)(void));
/* Under verify, the fast walker's stack fast[0..nf) against
 * libunwind's lib[0..nl), both as kept: 1 when they differ.  The first
 * difference of the process is said in one line (the first frame that
 * differs), makes libunwind the unwinder and calls on_stop. */
int mt_stack_verify(const uint64_t *fast, int nf, const uint64_t *lib, int nl);
/* The stacks the fast walker gave so far, and those it left to
 * libunwind (fast and verify). */
void mt_stack_unwind_counts(uint64_t *fast, uint64_t *libunwind);

/* What mt_stack_capture() calls; see there.  mt_stack_walk() walks from
 * the frame of registers ra, sp and bp (mt_unwind_cache_from()), or has
 * libunwind walk from its own frame. */
void mt_stack_unwind_enter(void);
void mt_stack_unwind_leave(void);
int mt_stack_keep(mt_stack_buf_t *st, int n, int depth);
int mt_stack_walk(mt_stack_buf_t *st, int want, int depth, uint64_t ra, uint64_t sp,
		  uint64_t bp);

/* libunwind's unw_backtrace, opened now if it was not (mt_unwind_lib.h),
 * or NULL when it cannot be: then the trace has ended (the unwinder's
 * on_stop, above), with one line. */
mt_unwind_lib_backtrace_fn mt_stack_libunwind_open(void);

/* unw_backtrace(), counted for the fork protocol as every walk through
 * libunwind is (mt_stack.c).  Always inlined: the walk begins in the
 * frame of the function that calls this.  0 frames when libunwind
 * cannot be opened. */
static inline __attribute__((always_inline)) int mt_stack_libunwind(void **p, int want)
{
	mt_unwind_lib_backtrace_fn bt =
		atomic_load_explicit(&mt_unwind_lib_backtrace, memory_order_acquire);
	int n;

	if (__builtin_expect(!bt, 0) && !(bt = mt_stack_libunwind_open()))
		return 0;
	mt_stack_unwind_enter();
	mt_real_owned++;
	n = bt(p, want);
	mt_real_owned--;
	mt_stack_unwind_leave();
	return n;
}

/*
 * The caller's return addresses, innermost first, up to depth of them,
 * without the tracer's own frames, at mt_stack_ips(st).  Returns how many.
 *
 * Always inlined, so that the walk begins in the function that calls
 * this, a hook: each frame walked costs about 6 ns (13.5 cycles), and a
 * capture called from the core called from a hook walked two frames of
 * the tracer's before the program's first (mt_trace.h's
 * mt_trace_allocated() calls it in the hook itself).  The fast walker
 * begins one frame further out, in the program's: the hook's frame
 * pointer (which __builtin_frame_address(0) makes it keep) gives the
 * program's return address, stack pointer and rbp, so no frame of the
 * tracer's is walked (but an exported hook's that calls the one inlining
 * this rather than jumping to it: the sanitizers' -O1 build).  libunwind
 * walks from mt_stack_walk's own frame.  The tracer's frames are dropped
 * after either walk.  What may take a lock is counted for the fork
 * protocol (mt_stack.c): libunwind's walk, and the fast walker's first
 * read of a rule.
 */
static inline __attribute__((always_inline)) int mt_stack_capture(mt_stack_buf_t *st,
								  int depth)
{
	int want = depth + 16;

	if (depth <= 0) {
		st->first = 0;
		return 0;
	}
	if (want > MT_STACK_CAPTURE_MAX)
		want = MT_STACK_CAPTURE_MAX;
	if (atomic_load_explicit(&mt_stack_unwinder, memory_order_relaxed) !=
	    MT_UNWIND_LIBUNWIND) {
		const uint64_t *fp = __builtin_frame_address(0);

		return mt_stack_walk(st, want, depth, (uint64_t)__builtin_return_address(0),
				     (uint64_t)(fp + 2), fp[0]);
	}
	return mt_stack_keep(st, mt_stack_libunwind(st->p, want), depth);
}

/* The frame id of ip, or 0 when it has none yet. */
uint64_t mt_stack_frame_find(uint64_t ip);
/* Give ip the next frame id and return it; 0 when out of memory. */
uint64_t mt_stack_frame_add(uint64_t ip);

/* The stack id of ips[0..n), or 0 when it has none yet. */
uint64_t mt_stack_find(const uint64_t *ips, int n);
/* Give the stack the next stack id and return it; 0 when out of memory.
 * Its frames must all have ids. */
uint64_t mt_stack_add(const uint64_t *ips, int n);

/*
 * Each thread keeps the stacks it used last, with their ids, so that the
 * usual event finds its stack id without the table lock.  An id belongs to
 * one generation of the tables (mt_stack_reset and mt_stack_forget start
 * the next): the caller compares the generation mt_stack_cached gives
 * with mt_stack_generation() before it uses the id.
 */
/* Make the key that frees a thread's cache when it ends (at start;
 * later calls do nothing; without it, threads have no cache). */
void mt_stack_cache_init(void);
/* The id this thread remembers for ips[0..n), or 0; *gen its generation.
 * Needs no lock. */
uint64_t mt_stack_cached(const uint64_t *ips, int n, uint64_t *gen);
/* Remember id for ips[0..n) in this thread (table lock held). */
void mt_stack_remember(const uint64_t *ips, int n, uint64_t id);
/* The tables' generation: it changes when a trace starts and when a
 * module is unloaded (mt_stack_forget). */
uint64_t mt_stack_generation(void);
/* The trace's generation: it changes only when a trace starts. */
uint64_t mt_stack_trace_generation(void);

/* The frame ids of ips[0..n) into ids (all must be known). */
void mt_stack_frame_ids(const uint64_t *ips, int n, uint64_t *ids);

/* fork(2)'s handlers, called first in the prepare handler: no unwind is
 * under way while the process forks (see mt_stack.c).  _prepare returns
 * once every unwind but the calling thread's own has ended, and until
 * _parent or _child no new one begins. */
void mt_stack_fork_prepare(void);
void mt_stack_fork_parent(void);
void mt_stack_fork_child(void);

/* For the tests of that protocol: fn(arg), counted as an unwind under
 * way, as mt_stack_capture() counts libunwind's. */
void mt_stack_as_unwind(void (*fn)(void *), void *arg);

/* Forget every frame and stack (a forked child starts its own trace). */
void mt_stack_reset(void);

/* Forget every frame and stack but keep counting ids up, for the same
 * trace: a module was unloaded, and another may be loaded at its
 * addresses, whose return addresses are other frames (another module,
 * symbol and build id), declared again under new ids. */
void mt_stack_forget(void);

#endif
