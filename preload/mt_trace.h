/*
 * mt_trace: the preload's core.  It turns what the hooks saw into trace
 * events (format.md section 2): the trace's start and stop, the ordered
 * write, the fork and exec policy, the untraced tree and the fatal-signal
 * handler.  Settings come from mt_settings.h, trace names from mt_name.h,
 * the frame and stack declarations from mt_declare.h.  The hooks
 * (mt_hooks.c) are a thin layer over it, so the Check tests drive this
 * API directly without LD_PRELOAD.
 *
 * Invariants:
 * - Events become records in the ring (mt_record.h), which a collector
 *   process drains into the trace (docs/preload.md, "The write path"):
 *   an event takes no lock and makes no system call unless the ring is
 *   full.  The order of the records is the trace's; seq and the rounding
 *   of t are the collector's.
 * - A frame or stack is declared (its record reserved) before any event
 *   that uses it: ids are handed out under the table lock, after the
 *   declaration's reservation.
 * - Nothing here allocates through malloc while recording; the calling
 *   thread's recursion guard (mt_trace_enter) keeps whatever libunwind or
 *   libc allocate on our behalf out of the trace.
 * - The table lock is never held while calling into the dynamic loader
 *   (unwinding and symbol lookup happen before it is taken).
 * - A free is recorded before the real free, and a realloc's record is
 *   reserved before its real call, so no other thread can be handed the
 *   address and record it before this event.
 * - Once the trace has stopped (exit, signal, a collector gone) every call
 *   is a no-op; the ring stays mapped, so late threads stay safe.
 * - errno is the same after every call as before it.
 *
 * Names: the first process (MEMTRACE_OUTPUT without %p) writes the name
 * the user gave; every other process and every image a process execs
 * writes the first free name of the pattern for descendants (out.jsonl
 * gives out.PID.jsonl, then out.PID.1.jsonl, ...), created new, so no
 * process ever empties or writes another's trace (open_image_trace()).
 *
 * Fork policy: a forked child writes its own trace (its own trace.start
 * with ppid, frames and stacks declared anew) under that rule; the
 * parent's trace is untouched.  Handlers registered with pthread_atfork
 * hold every tracer lock across fork().
 */
#ifndef MT_TRACE_H
#define MT_TRACE_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/mt_event.h"
#include "mt_sample.h"
#include "mt_stack.h"

#define MT_TRACE_DEFAULT_OUTPUT "memtrace.%p.jsonl.zst"
#define MT_TRACE_DEFAULT_DEPTH 32

/* Read the environment and start tracing, once; later calls do nothing.
 * Called by the library constructor and by the first hook, whichever
 * comes first.  Must be called inside mt_trace_enter(). */
void mt_trace_init(void);

/* MEMTRACE_STATS: the preload's constructor has begun, where this
 * image's start line begins (docs/preload.md).  Reads the clock only when
 * MEMTRACE_STATS asks for the lines.  Call before mt_real_resolve(). */
void mt_trace_mark_start(void);

/* The constructor's argc and argv, main()'s: the first trace.start's
 * argv is made from them instead of /proc/self/cmdline, which holds the
 * same bytes until the program changes them and costs a child process to
 * read (mt_nofd).  Call before mt_trace_init(); kept for that call only. */
void mt_trace_set_argv(int argc, char **argv);

/* The program has called prctl(PR_SET_MM, ...), which may move the exe
 * or the arguments' area: later trace.starts, the forked children's
 * included, read both from /proc/self instead of from what this process
 * kept. */
void mt_trace_mm_changed(void);

/* Start tracing to path (no pattern expansion) with stack_depth frames:
 * the tests' way in.  Returns 0, or -errno when the file cannot be made. */
int mt_trace_start(const char *path, int stack_depth);

/* The unwinder of the stacks, MT_UNWIND_* (mt_stack.h); under verify
 * the first difference of the unwinders ends the trace ("exit"), the
 * program running on.  mt_trace_init() sets MEMTRACE_UNWIND's. */
void mt_trace_set_unwinder(int unwinder);

/* Record trace.stop with reason ("exit", "signal", "api") and wait until
 * the collector has finished the trace.  Later events are ignored. */
void mt_trace_stop(const char *reason);

/*
 * The processes below the first of a tree must find the absolute pattern
 * of descendants in their environment (mt_output.h), and a shell hands
 * its children the environment it copied from main()'s envp, not
 * environ: so the MEMTRACE_OUTPUT entry of envp (and of environ, when
 * that is another array) is replaced in place, before main() runs, or,
 * when there is none, environ becomes a copy with the entry added, which
 * glibc then passes to main().  Nothing changes when the value was
 * already absolute and named %p.  The library constructor calls it with
 * the envp glibc gives constructors.
 */
void mt_trace_publish_env(char **envp);

/* 1 when tracing is on and the calling process is the one tracing (not
 * a vfork child sharing its memory).  A system call: for exits and execs,
 * not for events. */
int mt_trace_owned(void);

/* mt_trace_stop(reason) when mt_trace_owned(): _exit, _Exit, the
 * destructor. */
void mt_trace_end(const char *reason);

/* The program is about to install a seccomp filter (prctl(PR_SET_SECCOMP)
 * or seccomp(2), seen by the hooks): what the tracer would read or ask
 * later is done now, while it may (libunwind opened, the module table
 * and files, the clock's verdict), and nothing of the tracer's makes a
 * new kind of system call from then on (mt_prefault). */
void mt_trace_program_locks_down(void);

/*
 * On a normal exit (exit(), a return from main, also in a forked child),
 * before mt_trace_end(): call libstdc++'s __gnu_cxx::__freeres() when the
 * program had it at mt_trace_init(), with tracing on, so that the runtime
 * memory it frees (the 72,704-byte exception emergency pool) is recorded
 * freed, as under heaptrack and Valgrind.  Once per process; nothing when
 * the process is not the one tracing (a vfork child) or the calling
 * thread is inside the tracer.  Never from _exit/_Exit: they run no
 * destructor, may be called from a signal handler (free() is not
 * async-signal-safe) and leave the program's static objects live anyway.
 */
void mt_trace_freeres(void);

/*
 * An exec: mt_trace_exec_begin() records trace.stop with reason "exec",
 * waits until the collector has it in the file, and returns 1 with new
 * events held (other threads wait in their hooks: if the exec fails,
 * their events follow as if nothing happened); 0 when the process is not
 * tracing.  After a 1, the exec has failed when the caller gets control
 * back: it must call mt_trace_exec_failed(), which takes the stop back
 * and lets the trace go on.  errno is kept by both.
 */
int mt_trace_exec_begin(void);
void mt_trace_exec_failed(void);

/* In the child of a fork that ran no fork handlers (_Fork): tracing
 * stops for good without a byte written, the trace and its mapping being
 * the parent's.  Async-signal-safe (it only stores), as _Fork is: its
 * child may be running in a signal handler, and other threads' locks are
 * held forever in it. */
void mt_trace_fork_untraced_child(void);

/* The program is about to call dlopen: libunwind is opened first, if
 * it is not (mt_unwind_lib.h), so that a stack or a name that needs it
 * never finds the loader's lists half made by the program's dlopen.
 * Takes no lock of the tracer's; ends the trace when it cannot be
 * opened. */
void mt_trace_dlopening(void);

/* After a dlclose: if a module was unloaded, the fast unwinder's rules
 * and the frames and stacks declared so far are forgotten (another module
 * may be loaded at its addresses).  Takes the table lock; never call it
 * with the lock held.  No malloc, nothing recorded. */
void mt_trace_dlclosed(void);

/* The recursion guard: returns 1 when the calling thread should record
 * (and marks it busy), 0 when it is already inside the tracer or tracing
 * is off.  Every 1 must be followed by mt_trace_leave(). */
int mt_trace_enter(void);
void mt_trace_leave(void);
/* Mark the thread busy without checking whether tracing is on, for work
 * that must not be traced at all (init). */
int mt_trace_guard(void);

/* Events, with the stack of their caller.  align is 0 when the function
 * takes none; ptr is an allocation's, never NULL. */
void mt_trace_alloc(mt_fn_t fn, void *ptr, size_t size, size_t align);
void mt_trace_alloc_fail(mt_fn_t fn, size_t size, size_t align);
/* Record the free of ptr (non-NULL); call before the real free. */
void mt_trace_free(mt_fn_t fn, void *ptr);
/* Perform realloc(ptr, size) with the real function and record it:
 * ptr NULL is an alloc, size 0 a free (when the real realloc frees),
 * a kept address a resize, a moved one a remap, NULL alloc.fail. */
void *mt_trace_realloc(mt_fn_t fn, void *ptr, size_t size,
		       void *(*real)(void *, size_t));

/* The same with the stack ips[0..n) mt_stack_capture() took. */
void mt_trace_alloc_at(mt_fn_t fn, void *ptr, size_t size, size_t align,
		       const uint64_t *ips, int n);
void mt_trace_alloc_fail_at(mt_fn_t fn, size_t size, size_t align,
			    const uint64_t *ips, int n);
void *mt_trace_realloc_at(mt_fn_t fn, void *ptr, size_t size,
			  void *(*real)(void *, size_t), const uint64_t *ips,
			  int n);
/* The stack depth events are recorded with (MEMTRACE_STACK_DEPTH). */
int mt_trace_stack_depth(void);

/*
 * For the hooks: the allocation ptr of size bytes (NULL: it failed), and
 * realloc, with the stack captured in the hook itself (or the traced half
 * a frameless hook tail-calls, mt_hooks.c).  Always inlined:
 * the unwinder then walks no frame of the tracer's but the hook's (see
 * mt_stack_capture()).
 */
static inline __attribute__((always_inline)) void
mt_trace_recorded(mt_fn_t fn, void *ptr, size_t size, size_t align)
{
	mt_stack_buf_t st;
	int saved = errno, n = mt_stack_capture(&st, mt_trace_stack_depth());

	errno = saved; /* what the real function left */
	if (ptr)
		mt_trace_alloc_at(fn, ptr, size, align, mt_stack_ips(&st), n);
	else
		mt_trace_alloc_fail_at(fn, size, align, mt_stack_ips(&st), n);
}

static inline __attribute__((always_inline)) void
mt_trace_allocated(mt_fn_t fn, void *ptr, size_t size, size_t align)
{
	/* Sampling: an allocation not sampled costs its countdown, no
	 * stack.  A failed one is always recorded. */
	if (mt_sample_bytes && ptr && !mt_sample_take(size))
		return;
	mt_trace_recorded(fn, ptr, size, align);
}

static inline __attribute__((always_inline)) void *
mt_trace_reallocated(mt_fn_t fn, void *ptr, size_t size,
		     void *(*real)(void *, size_t))
{
	mt_stack_buf_t st;
	int saved, n;
	void *q;

	/* Sampling: the block a realloc returns is sampled as a new
	 * allocation of size bytes, so that each live block was sampled for
	 * its size now.  Taken, the realloc is recorded as what it did (an
	 * alloc, a resize, a remap); not taken, a sampled block leaves the
	 * trace with a free (fn realloc) recorded before the real call. */
	if (mt_sample_bytes && size && !mt_sample_take(size)) {
		if (ptr && mt_sample_marked(ptr))
			mt_trace_free(fn, ptr);
		q = real(ptr, size);
		if (!q)
			mt_trace_recorded(fn, NULL, size, 0);
		return q;
	}
	/* realloc(p, 0) frees a block only sampling knows of; realloc(NULL,
	 * 0) allocates no byte a sample could fall on. */
	if (mt_sample_bytes && !size && (!ptr || !mt_sample_marked(ptr)))
		return real(ptr, size);
	saved = errno;
	n = mt_stack_capture(&st, mt_trace_stack_depth());
	errno = saved;
	return mt_trace_realloc_at(fn, ptr, size, real, mt_stack_ips(&st), n);
}

/*
 * For the allocators a program declares through memtrace.h (mt_api.h):
 * the table lock, under which a declaration's line is recorded (made
 * with seq 0, at most MT_RING_TEXT_MAX bytes; nothing when tracing is
 * off) before any event can use what it declares, as frames and stacks
 * are; and a block event of allocator_id (>= 1) with "fn":"api" and the
 * stack ips[0..n).  Inside mt_trace_enter(), as every event.
 */
void mt_trace_lock(void);
void mt_trace_unlock(void);
void mt_trace_declare_locked(const char *text, size_t len);
void mt_trace_api_event(mt_kind_t kind, uint64_t allocator_id, uint64_t ptr,
			uint64_t new_ptr, uint64_t size, const uint64_t *ips,
			int n);

/* Whether tracing is on (for tests, and for the declarations of
 * mt_declare.c, which stop once it is off). */
int mt_trace_active(void);

/* The ring refused a record: the collector is gone, or finished because
 * it could not write.  Tracing stops for good, with the collector's
 * message or one line of ours (once).  For mt_declare.c. */
void mt_trace_collector_lost(void);

/* A system call the tracer cannot do without was refused with err
 * (EPERM or ENOSYS, a seccomp filter of the program's): tracing stops,
 * with one line, and the program runs on.  For mt_declare.c. */
void mt_trace_clone_refused(int err);

/*
 * MEMTRACE_FAIL_AT=N, the out-of-memory sweep's way in: the Nth traced
 * allocation call of this process fails.  mt_trace_init() reads it once
 * and removes it from the environment, and a forked child never inherits
 * it, so only the process it was set for fails; nonzero means armed.
 */
extern _Atomic uint64_t mt_trace_fail_at;

/* Count this allocation call; when it is the Nth, disarm, record its
 * alloc.fail (with "fail_at":N), set errno to ENOMEM and return 1. */
int mt_trace_fail_check(mt_fn_t fn, size_t size, size_t align);

/* For each allocating hook, inside mt_trace_enter(): 1 when the hook must
 * fail without calling the real function (return NULL, or ENOMEM from
 * posix_memalign).  Unarmed, it costs one predictable branch. */
static inline int mt_trace_fail_now(mt_fn_t fn, size_t size, size_t align)
{
	if (__builtin_expect(!atomic_load_explicit(&mt_trace_fail_at,
						   memory_order_relaxed), 1))
		return 0;
	return mt_trace_fail_check(fn, size, align);
}

/*
 * Sampling's fast paths, taken by the hooks before mt_trace_enter(): an
 * allocation the countdown passes over and the free of a block that was
 * not sampled record nothing, so they need neither the recursion guard
 * nor the tracer's state.  The countdown may so also count what the
 * tracer allocates for itself, which changes no estimate's expectation.
 * An armed MEMTRACE_FAIL_AT counts every call: no fast path then.
 */
static inline int mt_trace_sample_passes(size_t size)
{
	if (__builtin_expect(!mt_sample_bytes, 1) || (uint64_t)mt_sample_left <= size ||
	    atomic_load_explicit(&mt_trace_fail_at, memory_order_relaxed))
		return 0;
	mt_sample_left -= (int64_t)size;
	return 1;
}

static inline int mt_trace_sample_passes_free(const void *ptr)
{
	return mt_sample_bytes && !mt_sample_marked(ptr);
}

#endif
