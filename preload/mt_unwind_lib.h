/*
 * mt_unwind_lib: libunwind, opened when the tracer first needs it.
 *
 * The fast walker (mt_unwind_cache.h) gives nearly every stack and the
 * module's own file names nearly every frame (mt_symbol.h): most processes
 * never call libunwind.  Linked, libunwind and its liblzma were mapped,
 * relocated and unmapped by every exec'd image, some 0.3 ms a process
 * (docs/preload.md, "When libunwind is opened").  So the preload does not link
 * it; mt_unwind_lib_open() opens it with dlopen and routes its system
 * calls (mt_unwind_sys.h) before anything calls it:
 *
 *   - at the start, under MEMTRACE_UNWIND=libunwind or verify, and in a
 *     process that starts under a seccomp filter;
 *   - in the program's dlopen, before the real call, and before the
 *     program installs a seccomp filter (the hooks see both): a filter
 *     could refuse the files and mappings later, or kill for them;
 *   - otherwise at the first stack the fast walker leaves to libunwind,
 *     or the first frame only libunwind can name.
 *
 * A hook may run inside the loader (an allocation of glibc's own dlopen,
 * or a signal handler that interrupted one), where a dlopen nested in
 * the loader's work would find its lists half made.  The loader's own
 * word for that is its r_debug's r_state (RT_ADD or RT_DELETE while it
 * changes the list of objects): libunwind is opened only while it reads
 * RT_CONSISTENT, after waiting a while for it when other threads may be
 * the loader's, and otherwise not at all: one line says so and the trace
 * ends (the program runs on untouched).
 *
 * Never called with a lock of the tracer's held: dlopen takes the
 * loader's.  What dlopen and libunwind allocate is untraced and comes
 * from the preload's static arena (mt_real_owned, mt_real.h): callers are
 * inside the hooks' recursion guard, or at start.
 */
#ifndef MT_UNWIND_LIB_H
#define MT_UNWIND_LIB_H

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY
#endif
#include <libunwind.h>
#include <link.h>
#include <stdatomic.h>

/* unw_backtrace once libunwind is open and routed; NULL before. */
typedef int (*mt_unwind_lib_backtrace_fn)(void **, int);
extern _Atomic(mt_unwind_lib_backtrace_fn) mt_unwind_lib_backtrace;

/* What brackets the dlopen: the fork protocol's count of unwinds under
 * way (mt_stack.h), so that no fork leaves a child the loader's lock
 * held; and on_fail, which ends the trace, called once, by the thread
 * whose open failed, outside the bracket.  Set once, at start; NULL:
 * nothing. */
void mt_unwind_lib_init(void (*enter)(void), void (*leave)(void), void (*on_fail)(void));

/* Open libunwind and route its system calls, once.  0 when it is ready;
 * -1 when it cannot be, or not now (the loader at work in this thread):
 * then said in one line and the trace ended (on_fail), and every call
 * after gives -1. */
int mt_unwind_lib_open(void);

/* Whether an open failed (for tests). */
int mt_unwind_lib_failed(void);

/* libunwind's accessors of the local address space, and the space, for
 * naming a frame: opened as mt_unwind_lib_open() does; NULL when it
 * cannot be. */
unw_accessors_t *mt_unwind_lib_accessors(unw_addr_space_t *space);

/* Whether libunwind is open (for tests and the stats line). */
int mt_unwind_lib_is_open(void);

/* The loader's r_debug, as debuggers find it: the executable's DT_DEBUG
 * (the _r_debug symbol may be an executable's copy of it), else
 * _r_debug.  For tests. */
struct r_debug *mt_unwind_lib_loader_debug(void);

#endif
