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
#include <sys/auxv.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>

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

static void (*bracket_enter)(void), (*bracket_leave)(void);

void mt_unwind_lib_init(void (*enter)(void), void (*leave)(void))
{
	bracket_enter = enter;
	bracket_leave = leave;
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

static void say_once(const char *why, const char *detail)
{
	if (atomic_exchange(&said, 1))
		return;
	mt_say_line(why, detail, "; tracing stops, the program runs on");
}

/* A millisecond's sleep through the system call: nanosleep in libc is a
 * cancellation point. */
static void nap(void)
{
	struct timespec ts = { 0, WAIT_STEP_NS };

	mt_real_syscall6(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

static int open_now(void)
{
	mt_unwind_lib_backtrace_fn bt;
	void *h;

	if (mt_real_resolve() < 0 || !mt_real.dlopen) {
		say_once("cannot open " SONAME ": dlopen was not found", NULL);
		return -1;
	}
	/* RTLD_NOW: every GOT entry is bound before mt_unwind_sys routes
	 * the ones it takes, so no lazy binding rewrites one later. */
	/* Its message is left for the program's dlerror(): taking it
	 * translates it, through gettext's lock, which the program may hold
	 * around the allocation that brought the tracer here (mt_trace.c). */
	mt_real_owned++;
	h = mt_real.dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
	mt_real_owned--;
	if (!h) {
		say_once("cannot open " SONAME, NULL);
		return -1;
	}
	get_accessors = (unw_accessors_t *(*)(unw_addr_space_t))dlsym(h, NAME(unw_get_accessors));
	local_space = (unw_addr_space_t *)dlsym(h, NAME(unw_local_addr_space));
	bt = (mt_unwind_lib_backtrace_fn)dlsym(h, "unw_backtrace");
	if (!get_accessors || !local_space || !bt) {
		say_once("cannot find libunwind's functions in " SONAME, NULL);
		return -1;
	}
	/* libunwind's pipe must never be in the program's table: without
	 * the routing nothing calls it. */
	if (mt_unwind_sys_install() < 0) {
		say_once("cannot route libunwind's system calls away from the program's "
			 "descriptors", NULL);
		return -1;
	}
	atomic_store_explicit(&mt_unwind_lib_backtrace, bt, memory_order_release);
	return 0;
}

struct r_debug *mt_unwind_lib_loader_debug(void)
{
	static struct r_debug *found;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t bias = 0;
	int have_bias = 0;

	if (found)
		return found;
	for (size_t i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_PHDR) {
			bias = (uintptr_t)ph - ph[i].p_vaddr;
			have_bias = 1;
		}
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
static int open_once(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire), expected = NEVER;
	int claimed, rc = -1;

	if (s == OPEN)
		return 0;
	if (s == FAILED)
		return -1;
	for (int i = 0; !loader_at_rest(); i++) {
		/* With one thread the loader at work is this thread's,
		 * below this hook. */
		if (__libc_single_threaded || i == WAIT_STEPS) {
			atomic_store(&state, FAILED);
			say_once("libunwind is needed while the loader is loading or "
				 "unloading an object", NULL);
			return -1;
		}
		nap();
	}
	/* From the claim to its outcome no fork happens: a child would find
	 * the state claimed by a thread it does not have. */
	if (bracket_enter)
		bracket_enter();
	claimed = atomic_compare_exchange_strong(&state, &expected, OPENING);
	if (claimed) {
		rc = open_now();
		atomic_store_explicit(&state, rc == 0 ? OPEN : FAILED, memory_order_release);
	}
	if (bracket_leave)
		bracket_leave();
	if (claimed)
		return rc;
	/* Another thread is opening it.  It may be waiting for the loader's
	 * lock, which this thread may hold: wait a while, not for ever. */
	for (int i = 0; i < WAIT_STEPS; i++) {
		s = atomic_load_explicit(&state, memory_order_acquire);
		if (s != OPENING)
			return s == OPEN ? 0 : -1;
		nap();
	}
	atomic_store(&state, FAILED);
	say_once("libunwind is needed while another thread opens it", NULL);
	return -1;
}

int mt_unwind_lib_open(void)
{
	return open_once();
}

int mt_unwind_lib_failed(void)
{
	return atomic_load(&state) == FAILED;
}

unw_accessors_t *mt_unwind_lib_accessors(unw_addr_space_t *space)
{
	if (open_once() < 0)
		return NULL;
	*space = *local_space;
	return get_accessors(*local_space);
}

int mt_unwind_lib_is_open(void)
{
	return atomic_load(&state) == OPEN;
}
