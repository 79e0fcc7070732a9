/*
 * mt_unwind_lib: libunwind opened on first need (mt_unwind_lib.h says
 * when and why).  It must never open libunwind while the loader's list
 * of objects is half made, nor call a hooked or cancellable function of
 * the program's but dlopen itself.
 */
#include "mt_unwind_lib.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>

#include "mt_elf.h"
#include "mt_real.h"
#include "mt_say.h"
#include "mt_unwind_sys.h"

/* The ABI the tracer is built against: libunwind 1.x is
 * libunwind.so.8 (Debian's 1.6), whose system calls mt_unwind_sys.c
 * knows. */
#if UNW_VERSION_MAJOR != 1
#error "mt_unwind_lib: built for libunwind 1.x (libunwind.so.8)"
#endif
#define SONAME "libunwind.so.8"

/* The symbols' names, as libunwind.h's macros spell them for a local
 * unwinder (unw_get_accessors is _Ux86_64_get_accessors, and so on). */
#define NAME_(x) #x
#define NAME(x) NAME_(x)

_Atomic(mt_unwind_lib_backtrace_fn) mt_unwind_lib_backtrace;
static unw_accessors_t *(*get_accessors)(unw_addr_space_t);
static unw_addr_space_t *local_space;

static void (*bracket_enter)(void), (*bracket_leave)(void), (*end_trace)(void);

void mt_unwind_lib_init(void (*enter)(void), void (*leave)(void), void (*on_fail)(void))
{
	bracket_enter = enter;
	bracket_leave = leave;
	end_trace = on_fail;
}

/* 0 never tried, 1 opening, 2 open, -1 refused for good. */
enum { NEVER, OPENING, OPEN, FAILED = -1 };
static atomic_int state;
static atomic_int said;

/* How long a hook waits for another thread's dlopen of libunwind, or
 * for the loader to finish changing its list when another thread may be
 * the one changing it: the loader's work takes milliseconds; a thread
 * that is itself inside it would wait for ever. */
#define WAIT_STEP_NS 1000000L
#define WAIT_STEPS 200

/* The open has failed for good: said once, and the trace ends.  Called
 * outside the fork bracket: ending the trace waits for the collector. */
static int fail(const char *why)
{
	atomic_store(&state, FAILED);
	if (atomic_exchange(&said, 1))
		return -1;
	mt_say_line(why, "; tracing stops, the program runs on", NULL);
	if (end_trace)
		end_trace();
	return -1;
}

/* A millisecond's sleep through the system call: nanosleep in libc is a
 * cancellation point. */
static void nap(void)
{
	struct timespec ts = { 0, WAIT_STEP_NS };

	mt_real_syscall6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

/* NULL when libunwind is open and routed, else the line that says why
 * not. */
static const char *open_now(void)
{
	mt_unwind_lib_backtrace_fn bt;
	void *h;

	if (mt_real_resolve() < 0 || !mt_real.dlopen)
		return "cannot open " SONAME ": dlopen was not found";
	/* RTLD_NOW: every GOT entry is bound before mt_unwind_sys routes
	 * the ones it takes, so no lazy binding rewrites one later. */
	/* Its message is left for the program's dlerror(): taking it
	 * translates it, through gettext's lock, which the program may hold
	 * around the allocation that brought the tracer here (mt_trace.c). */
	mt_real_owned++;
	h = mt_real.dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
	mt_real_owned--;
	if (!h)
		return "cannot open " SONAME;
	get_accessors = (unw_accessors_t *(*)(unw_addr_space_t))dlsym(h, NAME(unw_get_accessors));
	local_space = (unw_addr_space_t *)dlsym(h, NAME(unw_local_addr_space));
	bt = (mt_unwind_lib_backtrace_fn)dlsym(h, "unw_backtrace");
	if (!get_accessors || !local_space || !bt)
		return "cannot find libunwind's functions in " SONAME;
	/* libunwind's pipe must never be in the program's table: without
	 * the routing nothing calls it. */
	if (mt_unwind_sys_install() < 0)
		return "cannot route libunwind's system calls away from the program's "
		       "descriptors";
	atomic_store_explicit(&mt_unwind_lib_backtrace, bt, memory_order_release);
	return NULL;
}

struct r_debug *mt_unwind_lib_loader_debug(void)
{
	static struct r_debug *found;
	const ElfW(Phdr) *ph;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t bias = 0;
	size_t n = 0;
	int have_bias;

	if (found)
		return found;
	have_bias = mt_elf_main_phdrs(&ph, &n, &bias) == 0;
	for (size_t i = 0; have_bias && i < n; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(bias + ph[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++)
		if (dyn->d_tag == DT_DEBUG && dyn->d_un.d_ptr)
			return found = (struct r_debug *)dyn->d_un.d_ptr;
	/* An executable without DT_DEBUG: the loader's own, through the
	 * GOT (an executable that refers to _r_debug may hold a copy). */
	return found = &_r_debug;
}

/* Whether the loader's list of the base namespace is whole: RT_ADD and
 * RT_DELETE while a dlopen or dlclose changes it. */
static int loader_at_rest(void)
{
	return __atomic_load_n(&mt_unwind_lib_loader_debug()->r_state, __ATOMIC_ACQUIRE) ==
	       RT_CONSISTENT;
}

/* Open, or wait for the thread that is opening. */
int mt_unwind_lib_open(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire), expected = NEVER;
	const char *why = NULL;
	int claimed;

	if (s == OPEN)
		return 0;
	if (s == FAILED)
		return -1;
	for (int i = 0; !loader_at_rest(); i++) {
		/* With one thread the loader at work is this thread's,
		 * below this hook. */
		if (__libc_single_threaded || i == WAIT_STEPS)
			return fail("libunwind is needed while the loader is loading or "
				    "unloading an object");
		nap();
	}
	/* From the claim to its outcome no fork happens: a child would find
	 * the state claimed by a thread it does not have. */
	if (bracket_enter)
		bracket_enter();
	claimed = atomic_compare_exchange_strong(&state, &expected, OPENING);
	if (claimed) {
		why = open_now();
		atomic_store_explicit(&state, why ? FAILED : OPEN, memory_order_release);
	}
	if (bracket_leave)
		bracket_leave();
	if (claimed)
		return why ? fail(why) : 0;
	/* Another thread is opening it.  It may be waiting for the loader's
	 * lock, which this thread may hold: wait a while, not for ever. */
	for (int i = 0; i < WAIT_STEPS; i++) {
		s = atomic_load_explicit(&state, memory_order_acquire);
		if (s != OPENING)
			return s == OPEN ? 0 : -1;
		nap();
	}
	return fail("libunwind is needed while another thread opens it");
}

int mt_unwind_lib_failed(void)
{
	return atomic_load(&state) == FAILED;
}

unw_accessors_t *mt_unwind_lib_accessors(unw_addr_space_t *space)
{
	if (mt_unwind_lib_open() < 0)
		return NULL;
	*space = *local_space;
	return get_accessors(*local_space);
}

int mt_unwind_lib_is_open(void)
{
	return atomic_load(&state) == OPEN;
}
